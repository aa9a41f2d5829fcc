import { crudController } from '../common/http/crud.controller.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { CLIENT_ERRORS } from './clients.errors.js';
import { ClientsService } from './clients.service.js';
import { CreateClientDto, ListClientsQuery, UpdateClientDto } from './dto/client.dto.js';
import { ClientResponse } from './dto/client.response.js';

/** CRUD of clients: a user sees the clients in their client_list, admins write. */
export class ClientsController extends crudController({
  path: 'clients',
  service: ClientsService,
  scoped: true,
  dto: { list: ListClientsQuery, create: CreateClientDto, update: UpdateClientDto, response: ClientResponse },
  routes: {
    list: { summary: 'List visible clients (a user sees the clients in their client_list)' },
    get: { summary: 'Get a client', errors: [CLIENT_ERRORS.clientNotFound] },
    create: { summary: 'Create a client (admin)', errors: [CLIENT_ERRORS.clientExists()] },
    update: {
      summary: 'Update a client (admin; partial body allowed)',
      errors: [CLIENT_ERRORS.clientNotFound, CLIENT_ERRORS.clientExists()],
    },
    delete: {
      summary: 'Delete a client (admin); answers the deleted client',
      errors: [CLIENT_ERRORS.clientNotFound, ERRORS.stillReferencedBy('Client', 'brands')],
    },
  },
}) {}
