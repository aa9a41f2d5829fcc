import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { AccessScope } from '../common/auth/access-scope.js';
import { Access } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { ClientsService } from './clients.service.js';
import { CreateClientDto, ListClientsQuery, UpdateClientDto } from './dto/client.dto.js';
import { ClientResponse } from './dto/client.response.js';

const NOT_FOUND = 'Missing, or not in the caller\'s client_list: `{"detail":"Client not found"}`';
const INVALID = 'Invalid id, query or body: `{"detail":"Validation failed: ...","errors":[...]}`';

@ApiTags('clients')
@Controller('clients')
export class ClientsController {
  constructor(private readonly clients: ClientsService) {}

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List visible clients (a user sees the clients in their client_list)' })
  @ApiOkResponse({ type: PageOf(ClientResponse) })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  list(@CurrentScope() scope: AccessScope, @Query() query: ListClientsQuery): Promise<Page<ClientResponse>> {
    return this.clients.list(scope, query);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Get a client' })
  @ApiOkResponse({ type: ClientResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<ClientResponse> {
    return this.clients.get(scope, id);
  }

  @Post()
  @Access('admin')
  @ApiOperation({ summary: 'Create a client (admin)' })
  @ApiCreatedResponse({ type: ClientResponse })
  @ApiConflictResponse({ description: 'Name already used (case-insensitive): `{"detail":"Client \'NAME\' already exists"}`' })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  create(@Body() body: CreateClientDto): Promise<ClientResponse> {
    return this.clients.create(body);
  }

  @Put(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update a client (admin; partial body allowed)' })
  @ApiOkResponse({ type: ClientResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: 'Name already used by another client: `{"detail":"Client \'NAME\' already exists"}`' })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  update(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Body() body: UpdateClientDto): Promise<ClientResponse> {
    return this.clients.update(scope, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @Access('admin')
  @ApiOperation({ summary: 'Delete a client (admin); answers the deleted client' })
  @ApiOkResponse({ type: ClientResponse })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: 'Brands still belong to it: `{"detail":"Client is still referenced by brands"}`' })
  @ApiUnprocessableEntityResponse({ description: INVALID })
  delete(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<ClientResponse> {
    return this.clients.delete(scope, id);
  }
}
