import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccessWithoutKeys } from '../common/auth/access.decorator.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { API_KEY_ERRORS } from './api-keys.errors.js';
import { ApiKeysService } from './api-keys.service.js';
import { CreateApiKeyDto, ListApiKeysQuery } from './dto/api-key.dto.js';
import { ApiKeyResponse, CreatedApiKeyResponse } from './dto/api-key.response.js';

/**
 * API keys, managed by people: an admin or a user with their access token (an ingest account gets
 * its keys from an admin). No API key calls these routes.
 */
@ApiTags('api-keys')
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @AccessWithoutKeys('admin', 'user')
  @ApiOperation({
    summary: 'Create an API key; the answer carries the key, shown this once',
    description:
      'The key acts as its owner (the caller, or for an admin the user named by `user_id`), narrowed by its scopes and clients, with the owner’s current role and clients on every request.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyResponse })
  @ApiErrors(
    { ...ERRORS.notEnoughPermissions, summary: 'Not an admin or user, or `user_id` sent by a non-admin' },
    ERRORS.invalidField(
      'scopes',
      'each value in scopes must be one of the following values: read, write, ingest, webhooks',
    ),
    ERRORS.invalidField('client_ids', 'must be clients the owner can see (unknown or not visible: 7)'),
    ERRORS.invalidField('expires_at', 'must be in the future'),
  )
  create(@CurrentUser() user: AuthUser, @Body() body: CreateApiKeyDto): Promise<CreatedApiKeyResponse> {
    return this.keys.create(user, body);
  }

  @Get()
  @AccessWithoutKeys('admin', 'user')
  @ApiOperation({ summary: "List API keys: the caller's own, or for an admin every key (filter `user_id`)" })
  @ApiOkResponse({ type: PageOf(ApiKeyResponse) })
  list(@CurrentUser() user: AuthUser, @Query() query: ListApiKeysQuery): Promise<Page<ApiKeyResponse>> {
    return this.keys.list(user, query);
  }

  @Get(':id')
  @AccessWithoutKeys('admin', 'user')
  @ApiOperation({ summary: 'An API key (never its secret)' })
  @ApiOkResponse({ type: ApiKeyResponse })
  @ApiErrors(API_KEY_ERRORS.apiKeyNotFound)
  get(@CurrentUser() user: AuthUser, @IdParam() id: number): Promise<ApiKeyResponse> {
    return this.keys.get(user, id);
  }

  @Delete(':id')
  @HttpCode(200)
  @AccessWithoutKeys('admin', 'user')
  @ApiOperation({
    summary: 'Revoke an API key (idempotent: a second call keeps the first `revoked_at`)',
    description: 'Effective at once on this instance and within a second on every other.',
  })
  @ApiOkResponse({ type: ApiKeyResponse })
  @ApiErrors(API_KEY_ERRORS.apiKeyNotFound)
  revoke(@CurrentUser() user: AuthUser, @IdParam() id: number): Promise<ApiKeyResponse> {
    return this.keys.revoke(user, id);
  }
}
