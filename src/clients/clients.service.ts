import { Injectable } from '@nestjs/common';
import { DomainError, found } from '../common/errors/domain-error.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { CLIENT_ERRORS } from './clients.errors.js';
import type { AccessScope } from '../common/auth/access-scope.js';
import { toPage, type Page } from '../common/http/pagination.js';
import { Db } from '../infrastructure/database/db.js';
import { ClientsRepository } from './clients.repository.js';
import type { CreateClientDto, ListClientsQuery, UpdateClientDto } from './dto/client.dto.js';
import { toClientResponse, type ClientResponse } from './dto/client.response.js';

/**
 * Clients. No write here changes a tracker list or analytics result (a client's
 * name is shown by neither, and only an unreferenced client can be deleted), so nothing is
 * invalidated.
 */
@Injectable()
export class ClientsService {
  constructor(
    private readonly db: Db,
    private readonly clients: ClientsRepository,
  ) {}

  async list(scope: AccessScope, query: ListClientsQuery): Promise<Page<ClientResponse>> {
    const { rows, total } = await this.clients.list(scope, { name: query.name }, query);
    return toPage(rows.map(toClientResponse), total, query);
  }

  async get(scope: AccessScope, id: number): Promise<ClientResponse> {
    return toClientResponse(found(await this.clients.findById(scope, id), CLIENT_ERRORS.clientNotFound));
  }

  /** Any admin may create any client: the scope takes part only in reading and changing one. */
  async create(_scope: AccessScope, body: CreateClientDto): Promise<ClientResponse> {
    return this.db.transaction(async () => {
      if (await this.clients.nameTaken(body.name, null)) throw duplicateName(body.name);
      return toClientResponse(await this.clients.insert({ name: body.name }));
    });
  }

  async update(scope: AccessScope, id: number, body: UpdateClientDto): Promise<ClientResponse> {
    return this.db.transaction(async () => {
      found(await this.clients.findById(scope, id, true), CLIENT_ERRORS.clientNotFound);
      if (body.name !== undefined && (await this.clients.nameTaken(body.name, id))) throw duplicateName(body.name);
      const row = await this.clients.update(scope, id, { name: body.name });
      return toClientResponse(row!);
    });
  }

  /** The row is locked first, so no brand can start referencing it between the check and the delete. */
  async delete(scope: AccessScope, id: number): Promise<ClientResponse> {
    return this.db.transaction(async () => {
      found(await this.clients.findById(scope, id, true), CLIENT_ERRORS.clientNotFound);
      if ((await this.clients.references(id)).brands) {
        throw new DomainError(ERRORS.stillReferencedBy('Client', 'brands'));
      }
      const row = await this.clients.delete(scope, id);
      return toClientResponse(row!);
    });
  }
}

function duplicateName(name: string): DomainError {
  return new DomainError(CLIENT_ERRORS.clientExists(name));
}
