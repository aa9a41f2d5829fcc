import { Body, Controller, Delete, Get, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Access } from '../common/auth/access.decorator.js';
import type { AuthUser } from '../common/auth/auth-user.js';
import { CurrentUser } from '../common/auth/current-user.decorator.js';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { PageOf, PaginationQuery, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { CreateUserDto, UpdateMeDto, UpdateUserDto } from './dto/user.dto.js';
import { UserResponse } from './dto/user.response.js';
import { UsersService } from './users.service.js';


@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get('me')
  @Access('admin', 'user', 'ingest')
  @ApiOperation({ summary: 'The current user' })
  @ApiOkResponse({ type: UserResponse })
  me(@CurrentUser() user: AuthUser): Promise<UserResponse> {
    return this.users.me(user.id);
  }

  @Patch('me')
  @Access('admin', 'user', 'ingest')
  @ApiOperation({ summary: 'Change own name, notification preferences or password (password needs current_password)' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors(
    ERRORS.currentPasswordIncorrect,
    ERRORS.validationFailed,
    ERRORS.invalidField('current_password', 'is required to change the password'),
    ERRORS.invalidField('email', 'should not exist'),
  )
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
  @ApiErrors(ERRORS.emailTaken, ERRORS.validationFailed, ERRORS.invalidField('client_list', 'unknown client id(s): 7'))
  create(@Body() body: CreateUserDto): Promise<UserResponse> {
    return this.users.create(body);
  }

  @Get(':id')
  @Access('admin')
  @ApiOperation({ summary: 'A user by id (admin)' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors(ERRORS.userNotFound)
  get(@IdParam() id: number): Promise<UserResponse> {
    return this.users.get(id);
  }

  @Patch(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update any field of a user (admin); effective on the user’s next request' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors(ERRORS.userNotFound, ERRORS.emailTaken, ERRORS.lastAdmin)
  update(@IdParam() id: number, @Body() body: UpdateUserDto): Promise<UserResponse> {
    return this.users.update(id, body);
  }

  @Delete(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Delete a user (admin); returns the deleted user' })
  @ApiOkResponse({ type: UserResponse })
  @ApiErrors(ERRORS.userNotFound, ERRORS.lastAdmin)
  delete(@IdParam() id: number): Promise<UserResponse> {
    return this.users.delete(id);
  }
}
