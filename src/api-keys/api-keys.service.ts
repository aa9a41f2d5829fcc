import { Injectable } from '@nestjs/common';
import { API_KEY_SCOPES, isAdmin, type ApiKeyScope, type AuthUser } from '../common/auth/auth-user.js';
import { DomainError, found } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { isUniqueViolation } from '../infrastructure/database/sql-state.js';
import { newKeyText } from './api-key-text.js';
import { API_KEY_ERRORS } from './api-keys.errors.js';
import { ApiKeysRepository, type KeyViewer } from './api-keys.repository.js';
import type { CreateApiKeyDto, ListApiKeysQuery } from './dto/api-key.dto.js';
import { toApiKeyResponse, type ApiKeyResponse, type CreatedApiKeyResponse } from './dto/api-key.response.js';

/** How far ahead a key may expire. */
const MAX_LIFETIME_YEARS = 2;
/** Prefixes are drawn from 36^8 ≈ 2.8e12; a collision is rare, two in a row practically never. */
const PREFIX_ATTEMPTS = 3;

/**
 * API keys of machine clients: created by a person (a user for themselves, an admin for anyone),
 * listed, read and revoked. The key's text is returned once, at creation; only the hash of its
 * secret is stored. Scopes are not checked against the owner's role here: each request is allowed
 * by the owner's current role and clients and the key's scope and clients together.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly invalidation: CacheInvalidation,
  ) {}

  async create(caller: AuthUser, dto: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    // `user_id` is an admin's field: a non-admin naming anyone, themselves or null included, is refused.
    if (dto.user_id !== undefined && !isAdmin(caller)) throw new DomainError(ERRORS.notEnoughPermissions);
    const forOther = dto.user_id !== undefined && dto.user_id !== null;
    const ownerId = forOther ? (dto.user_id as number) : caller.id;
    const expiresAt = checkedExpiry(dto.expires_at ?? null);
    if (forOther && !(await this.keys.findOwner(ownerId)))
      throw RequestValidationException.field('user_id', `no user with id ${ownerId}`);
    const clientIds = dto.client_ids ? [...new Set(dto.client_ids)].sort((a, b) => a - b) : null;
    if (clientIds) {
      const refused = await this.keys.clientsNotVisibleTo(ownerId, clientIds);
      if (refused.length > 0)
        throw RequestValidationException.field(
          'client_ids',
          `must be clients the owner can see (unknown or not visible: ${refused.join(', ')})`,
        );
    }
    const scopes = API_KEY_SCOPES.filter((scope) => dto.scopes.includes(scope));
    for (let attempt = 1; ; attempt += 1) {
      const key = newKeyText();
      try {
        const row = await this.keys.insert({
          userId: ownerId,
          name: dto.name,
          prefix: key.prefix,
          secretHash: key.secretHash,
          scopes: scopes as ApiKeyScope[],
          clientIds,
          expiresAt,
        });
        return { ...toApiKeyResponse(row), key: key.text };
      } catch (error) {
        if (attempt >= PREFIX_ATTEMPTS || !isUniqueViolation(error, 'api_keys_prefix_key')) throw error;
      }
    }
  }

  async list(caller: AuthUser, query: ListApiKeysQuery): Promise<Page<ApiKeyResponse>> {
    const { rows, total } = await this.keys.list(viewerOf(caller), { userId: query.user_id }, query);
    return toPage(rows.map(toApiKeyResponse), total, query);
  }

  async get(caller: AuthUser, id: number): Promise<ApiKeyResponse> {
    return toApiKeyResponse(found(await this.keys.findById(viewerOf(caller), id), API_KEY_ERRORS.apiKeyNotFound));
  }

  /**
   * Revokes the key (idempotent: a revoked key keeps its first `revoked_at`). This instance drops
   * its cached copy at once; the database trigger tells the others at commit.
   */
  async revoke(caller: AuthUser, id: number): Promise<ApiKeyResponse> {
    const row = found(await this.keys.revoke(viewerOf(caller), id), API_KEY_ERRORS.apiKeyNotFound);
    this.invalidation.apiKeyChanged(row.prefix);
    return toApiKeyResponse(row);
  }
}

function viewerOf(caller: AuthUser): KeyViewer {
  return { userId: caller.id, all: isAdmin(caller) };
}

/** The expiry when it is in the future and at most MAX_LIFETIME_YEARS ahead (null: none); else 422. */
function checkedExpiry(expiresAt: Date | null): Date | null {
  if (expiresAt === null) return null;
  const now = new Date();
  if (expiresAt.getTime() <= now.getTime())
    throw RequestValidationException.field('expires_at', 'must be in the future');
  const latest = new Date(now);
  latest.setUTCFullYear(latest.getUTCFullYear() + MAX_LIFETIME_YEARS);
  if (expiresAt.getTime() > latest.getTime())
    throw RequestValidationException.field('expires_at', `must be at most ${MAX_LIFETIME_YEARS} years ahead`);
  return expiresAt;
}
