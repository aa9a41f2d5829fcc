import { HttpException } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { DomainError } from '../../common/errors/domain-error.js';
import { flattenValidationErrors } from '../../common/errors/validation.exception.js';
import { CreateUserDto } from '../../users/dto/user.dto.js';
import { UsersService } from '../../users/users.service.js';
import { requireString, type CliCommand } from '../command.js';

/**
 * `user:create`: the same validation and rules as `POST /users` (DTO, unique e-mail, existing
 * clients). Prints the new user's id — never the password.
 */
export const userCreateCommand: CliCommand = {
  name: 'user:create',
  usage: 'user:create --email E --password P --name N [--admin] [--clients 1,2]   create a user',
  async run(app, args) {
    const clients =
      typeof args.clients === 'string'
        ? args.clients
            .split(',')
            .map((id) => id.trim())
            .filter(Boolean)
        : [];
    const dto = plainToInstance(CreateUserDto, {
      email: requireString(args, 'email'),
      password: requireString(args, 'password'),
      name: requireString(args, 'name'),
      roles: args.admin === true ? ['admin'] : ['user'],
      client_list: clients.map((id) => (/^\d+$/.test(id) ? Number(id) : id)),
    });
    const problems = flattenValidationErrors(await validate(dto, { whitelist: true, forbidNonWhitelisted: true }));
    if (problems.length > 0)
      throw new Error(
        problems.map((p) => `${p.field === 'client_list' ? 'clients' : p.field}: ${p.message}`).join('; '),
      );
    const user = await app
      .get(UsersService)
      .create(dto)
      .catch((error: unknown) => {
        // Service errors (domain errors, validation exceptions) carry the answer's `detail` text: show just that.
        const detail =
          error instanceof DomainError
            ? error.error.detail
            : error instanceof HttpException
              ? (error.getResponse() as { detail?: string }).detail
              : undefined;
        throw detail ? new Error(detail) : error;
      });
    console.log(`Created user ${user.id} (${user.email}, roles: ${user.roles.join(',')})`);
  },
};
