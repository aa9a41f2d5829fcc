import { Module } from '@nestjs/common';
import { PasswordService } from './password.service.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { ActiveUsers } from './active-users.service.js';
import { UsersService } from './users.service.js';

/** Users, their management and their passwords (hashed here; login verifies through the same service). */
@Module({
  controllers: [UsersController],
  providers: [UsersRepository, UsersService, PasswordService, ActiveUsers],
  exports: [UsersService, PasswordService, ActiveUsers],
})
export class UsersModule {}
