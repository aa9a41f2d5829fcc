import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/current-user.decorator.js';
import { PageOf, PaginationQuery, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { CreateUserDto, UpdateMeDto, UpdateUserDto } from './dto/user.dto.js';
import { UserResponse } from './dto/user.response.js';
import { UsersService } from './users.service.js';

const NOT_FOUND = '`{"detail":"User not found"}`';
const EMAIL_CONFLICT = '`{"detail":"A user with this email already exists"}`';
const LAST_ADMIN_CONFLICT = '`{"detail":"Cannot remove the last active admin"}` (deleting, deactivating or demoting it)';
const INVALID = 'Validation failed (`{"detail":"Validation failed: …","errors":[…]}`)';

@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get('me')
  @Access('admin', 'user', 'ingest')
  @ApiOperation({ summary: 'The current user' })
  @ApiOkResponse({ type: UserResponse })
  me(@CurrentUser() user: AuthUser): Promise<UserResponse> {
    return this.users.get(user.id);
  }

  @Patch('me')
  @Access('admin', 'user', 'ingest')
  @ApiOperation({ summary: 'Change own name, notification preferences or password (password needs current_password)' })
  @ApiOkResponse({ type: UserResponse })
  @ApiBadRequestResponse({ description: '`{"detail":"Current password is incorrect"}`' })
  @ApiUnprocessableEntityResponse({ description: `${INVALID}; also \`password\` without \`current_password\` and any other field (email, roles, …)` })
  updateMe(@CurrentUser() user: AuthUser, @Body() body: UpdateMeDto): Promise<UserResponse> {
    return this.users.updateMe(user.id, body);
  }

  @Get()
  @Access('admin')
  @ApiOperation({ summary: 'List users (admin)' })
  @ApiOkResponse({ type: PageOf(UserResponse) })
  list(@Query() query: PaginationQuery): Promise<Page<UserResponse>> {
    return this.users.list(query);
  }

  @Post()
  @Access('admin')
  @ApiOperation({ summary: 'Create a user (admin)' })
  @ApiCreatedResponse({ type: UserResponse })
  @ApiConflictResponse({ description: EMAIL_CONFLICT })
  @ApiUnprocessableEntityResponse({ description: `${INVALID}; unknown client ids in client_list` })
  create(@Body() body: CreateUserDto): Promise<UserResponse> {
    return this.users.create(body);
  }

  @Get(':id')
  @Access('admin')
  @ApiOperation({ summary: 'A user by id (admin)' })
  @ApiOkResponse({ type: UserResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  get(@IdParam() id: number): Promise<UserResponse> {
    return this.users.get(id);
  }

  @Patch(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update any field of a user (admin); effective on the user’s next request' })
  @ApiOkResponse({ type: UserResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: `${EMAIL_CONFLICT} or ${LAST_ADMIN_CONFLICT}` })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  update(@IdParam() id: number, @Body() body: UpdateUserDto): Promise<UserResponse> {
    return this.users.update(id, body);
  }

  @Delete(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Delete a user (admin); returns the deleted user' })
  @ApiOkResponse({ type: UserResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: LAST_ADMIN_CONFLICT })
  delete(@IdParam() id: number): Promise<UserResponse> {
    return this.users.delete(id);
  }
}
