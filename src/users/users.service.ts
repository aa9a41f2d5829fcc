import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors/domain-error.js';
import { USER_ERRORS } from './users.errors.js';
import { PasswordService } from './password.service.js';
import { RequestValidationException } from '../common/errors/validation.exception.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { CacheInvalidation } from '../infrastructure/cache/cache-invalidation.js';
import { Db } from '../infrastructure/database/db.js';
import { ActiveUsers } from './active-users.service.js';
import type { CreateUserDto, UpdateMeDto, UpdateUserDto } from './dto/user.dto.js';
import { toUserResponse, type UserResponse } from './dto/user.response.js';
import { Cached } from '../infrastructure/cache/cache-header.interceptor.js';
import { toCachedJson } from '../infrastructure/cache/tiered-cache.js';
import {
  EmailTakenError,
  UsersRepository,
  type ActiveUserRow,
  type UserPatch,
  type UserRow,
} from './users.repository.js';

export type { UserRow } from './users.repository.js';

/**
 * User management. The guard reads the user row through the in-process cache tier, which every
 * change here (and a database trigger, on every instance) invalidates: a change takes effect on
 * the user's next request. Passwords are hashed here and never leave it.
 */
@Injectable()
export class UsersService {
  constructor(
    private readonly db: Db,
    private readonly users: UsersRepository,
    private readonly passwords: PasswordService,
    private readonly activeUsers: ActiveUsers,
    private readonly invalidation: CacheInvalidation,
  ) {}

  /** The caller's own row: the one the guard has just read (an in-process hit, no query). */
  /** The caller's own record; the same answer again while the in-process tier holds the same row. */
  async me(id: number): Promise<Cached<UserResponse>> {
    const row = this.found(await this.activeUsers.get(id));
    const body = toCachedJson(JSON.stringify(toUserResponse(row)));
    return new Cached(body, null, () => (this.activeUsers.cached(id) === row ? body : undefined));
  }

  async list(query: { skip: number; limit: number }): Promise<Page<UserResponse>> {
    const { rows, total } = await this.users.list(query);
    return toPage(rows.map(toUserResponse), total, query);
  }

  async get(id: number): Promise<UserResponse> {
    return toUserResponse(await this.found(await this.users.findById(id)));
  }

  async create(dto: CreateUserDto): Promise<UserResponse> {
    const clientList = await this.checkedClientList(dto.client_list ?? []);
    const passwordHash = await this.passwords.hash(dto.password);
    const row = await this.mapEmailTaken(() =>
      this.users.insert({
        name: dto.name,
        email: dto.email,
        passwordHash,
        roles: dto.roles ?? ['user'],
        clientList,
        notifyEmail: dto.notification_preferences?.email,
        notifyUi: dto.notification_preferences?.ui,
        isActive: dto.is_active,
      }),
    );
    return toUserResponse(row);
  }

  async update(id: number, dto: UpdateUserDto): Promise<UserResponse> {
    const patch: UserPatch = {
      name: dto.name,
      email: dto.email,
      roles: dto.roles,
      clientList: dto.client_list === undefined ? undefined : await this.checkedClientList(dto.client_list),
      notifyEmail: dto.notification_preferences?.email,
      notifyUi: dto.notification_preferences?.ui,
      isActive: dto.is_active,
      passwordHash: dto.password === undefined ? undefined : await this.passwords.hash(dto.password),
    };
    const removesAdmin = patch.isActive === false || (patch.roles !== undefined && !patch.roles.includes('admin'));
    if (!removesAdmin)
      return this.changed(id, toUserResponse(this.found(await this.mapEmailTaken(() => this.users.update(id, patch)))));
    return this.changed(
      id,
      await this.db.transaction(async () => {
        await this.users.lockAdminChanges();
        const current = this.found(await this.users.findById(id));
        if (isActiveAdmin(current) && !(await this.users.otherActiveAdminExists(id))) {
          throw new DomainError(USER_ERRORS.lastAdmin);
        }
        return toUserResponse(this.found(await this.mapEmailTaken(() => this.users.update(id, patch))));
      }),
    );
  }

  async delete(id: number): Promise<UserResponse> {
    return this.changed(
      id,
      await this.db.transaction(async () => {
        await this.users.lockAdminChanges();
        const current = this.found(await this.users.findById(id));
        if (isActiveAdmin(current) && !(await this.users.otherActiveAdminExists(id))) {
          throw new DomainError(USER_ERRORS.lastAdmin);
        }
        return toUserResponse(this.found(await this.users.delete(id)));
      }),
    );
  }

  /**
   * Self-service changes. A wrong `current_password` is 400 (the request is understood and the
   * token is fine, so not 401 — a 401 would make clients drop a valid session); a new password
   * without `current_password` is 422 like any other missing field.
   */
  async updateMe(userId: number, dto: UpdateMeDto): Promise<UserResponse> {
    let passwordHash: string | undefined;
    if (dto.password !== undefined) {
      if (dto.current_password === undefined) {
        throw RequestValidationException.field('current_password', 'is required to change the password');
      }
      const currentHash = this.found(await this.users.findPasswordHash(userId));
      if (!(await this.passwords.verify(currentHash, dto.current_password))) {
        throw new DomainError(USER_ERRORS.currentPasswordIncorrect);
      }
      passwordHash = await this.passwords.hash(dto.password);
    }
    const row = await this.users.update(userId, {
      name: dto.name,
      notifyEmail: dto.notification_preferences?.email,
      notifyUi: dto.notification_preferences?.ui,
      passwordHash,
    });
    return this.changed(userId, toUserResponse(this.found(row)));
  }

  /** For login: the user with this e-mail (case-insensitive) and its password hash, active or not. */
  findForLogin(email: string): Promise<(UserRow & { password_hash: string }) | null> {
    return this.users.findByEmailWithHash(email);
  }

  /** The active user with its token epoch, read from the database (not the in-process tier). */
  findActive(id: number): Promise<ActiveUserRow | null> {
    return this.users.findActiveById(id);
  }

  count(): Promise<number> {
    return this.users.count();
  }

  /** The bootstrap admin of an empty database (first start); EmailTakenError if the e-mail is taken. */
  async createFirstAdmin(email: string, password: string): Promise<UserRow> {
    return this.users.insert({
      name: 'Administrator',
      email,
      passwordHash: await this.passwords.hash(password),
      roles: ['admin'],
      clientList: [],
    });
  }

  /** After the write committed: this instance drops its copy of the row at once (the trigger tells the others). */
  private changed<T>(userId: number, result: T): T {
    this.invalidation.userChanged(userId);
    return result;
  }

  /** Deduplicated, and every id must be an existing client (an array column has no foreign key). */
  private async checkedClientList(clientIds: number[]): Promise<number[]> {
    const unique = [...new Set(clientIds)].sort((a, b) => a - b);
    const missing = await this.users.missingClientIds(unique);
    if (missing.length > 0)
      throw RequestValidationException.field('client_list', `unknown client id(s): ${missing.join(', ')}`);
    return unique;
  }

  private found<T>(value: T | null): T {
    if (value === null) throw new DomainError(USER_ERRORS.userNotFound);
    return value;
  }

  private async mapEmailTaken<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof EmailTakenError) throw new DomainError(USER_ERRORS.emailTaken);
      throw error;
    }
  }
}

function isActiveAdmin(user: UserRow): boolean {
  return user.is_active && user.roles.includes('admin');
}
