import { Body, Get, Patch, UseInterceptors } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AccessWithoutKeys } from '../common/auth/access.decorator.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { USER_ERRORS } from './users.errors.js';
import { BodyLimit, DEFAULT_JSON_BODY_LIMIT } from '../common/http/request-body.js';
import { crudController } from '../common/http/crud.controller.js';
import { Cached, CacheHeaderInterceptor } from '../infrastructure/cache/cache-header.interceptor.js';
import { PaginationQuery } from '../common/http/pagination.js';
import { CreateUserDto, UpdateMeDto, UpdateUserDto } from './dto/user.dto.js';
import { UserResponse } from './dto/user.response.js';
import { UsersService } from './users.service.js';

/**
 * User management (admin) and every signed-in user's own record under /users/me; no API key calls them. A `client_list`
 * may hold 10 000 ids (about 110 kB of JSON), more than the default body limit; /users/me sets none.
 */
@BodyLimit(256 * 1024)
export class UsersController extends crudController({
  path: 'users',
  service: UsersService,
  scoped: false,
  access: { read: ['admin'], write: ['admin'] },
  updateVerb: 'patch',
  apiKeys: false,
  dto: { list: PaginationQuery, create: CreateUserDto, update: UpdateUserDto, response: UserResponse },
  routes: {
    list: { summary: 'List users (admin)' },
    get: { summary: 'A user by id (admin)', errors: [USER_ERRORS.userNotFound] },
    create: {
      summary: 'Create a user (admin)',
      errors: [
        USER_ERRORS.emailTaken,
        ERRORS.validationFailed,
        ERRORS.invalidField('client_list', 'unknown client id(s): 7'),
      ],
    },
    update: {
      summary: 'Update any field of a user (admin); effective on the user’s next request',
      errors: [USER_ERRORS.userNotFound, USER_ERRORS.emailTaken, USER_ERRORS.lastAdmin],
    },
    delete: {
      summary: 'Delete a user (admin); returns the deleted user',
      errors: [USER_ERRORS.userNotFound, USER_ERRORS.lastAdmin],
    },
  },
}) {
  @Get('me')
  @AccessWithoutKeys('admin', 'user', 'ingest')
  @ApiOperation({ summary: 'The current user' })
  @ApiOkResponse({ type: UserResponse })
  @UseInterceptors(CacheHeaderInterceptor)
  me(@CurrentUser() user: AuthUser): Promise<Cached<UserResponse>> {
    return this.service.me(user.id);
  }

  @Patch('me')
  @BodyLimit(DEFAULT_JSON_BODY_LIMIT)
  @AccessWithoutKeys('admin', 'user', 'ingest')
  @ApiOperation({ summary: 'Change own name, notification preferences or password (password needs current_password)' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors(
    USER_ERRORS.currentPasswordIncorrect,
    ERRORS.validationFailed,
    ERRORS.invalidField('current_password', 'is required to change the password'),
    ERRORS.invalidField('email', 'should not exist'),
  )
  updateMe(@CurrentUser() user: AuthUser, @Body() body: UpdateMeDto): Promise<UserResponse> {
    return this.service.updateMe(user.id, body);
  }
}
