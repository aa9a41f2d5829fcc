import { Module } from '@nestjs/common';
import { PasswordService } from '../auth/password.service.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

/**
 * Users and their management. PasswordService lives here (not in AuthModule) because both user
 * management and login hash passwords, and AuthModule already depends on this module.
 */
@Module({
  controllers: [UsersController],
  providers: [UsersRepository, UsersService, PasswordService],
  exports: [UsersRepository, UsersService, PasswordService],
})
export class UsersModule {}
