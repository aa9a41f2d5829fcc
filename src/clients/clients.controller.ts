import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors } from '../common/errors/api-errors.decorator.js';
import { ERRORS } from '../common/errors/error-catalogue.js';
import { AccessScope } from '../common/auth/access-scope.js';
import { Access } from '../common/auth/access.decorator.js';
import { CurrentScope } from '../common/auth/current-user.decorator.js';
import { PageOf, type Page } from '../common/http/pagination.js';
import { IdParam } from '../common/http/parse-id.pipe.js';
import { ClientsService } from './clients.service.js';
import { CreateClientDto, ListClientsQuery, UpdateClientDto } from './dto/client.dto.js';
import { ClientResponse } from './dto/client.response.js';


@ApiTags('clients')
@Controller('clients')
export class ClientsController {
  constructor(private readonly clients: ClientsService) {}

  @Get()
  @Access('admin', 'user')
  @ApiOperation({ summary: 'List visible clients (a user sees the clients in their client_list)' })
  @ApiOkResponse({ type: PageOf(ClientResponse) })
  list(@CurrentScope() scope: AccessScope, @Query() query: ListClientsQuery): Promise<Page<ClientResponse>> {
    return this.clients.list(scope, query);
  }

  @Get(':id')
  @Access('admin', 'user')
  @ApiOperation({ summary: 'Get a client' })
  @ApiOkResponse({ type: ClientResponse })
  @ApiErrors(ERRORS.clientNotFound)
  get(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<ClientResponse> {
    return this.clients.get(scope, id);
  }

  @Post()
  @Access('admin')
  @ApiOperation({ summary: 'Create a client (admin)' })
  @ApiCreatedResponse({ type: ClientResponse })
  @ApiErrors(ERRORS.clientExists())
  create(@Body() body: CreateClientDto): Promise<ClientResponse> {
    return this.clients.create(body);
  }

  @Put(':id')
  @Access('admin')
  @ApiOperation({ summary: 'Update a client (admin; partial body allowed)' })
  @ApiOkResponse({ type: ClientResponse })
  @ApiErrors(ERRORS.clientNotFound, ERRORS.clientExists())
  update(@CurrentScope() scope: AccessScope, @IdParam() id: number, @Body() body: UpdateClientDto): Promise<ClientResponse> {
    return this.clients.update(scope, id, body);
  }

  @Delete(':id')
  @HttpCode(200)
  @Access('admin')
  @ApiOperation({ summary: 'Delete a client (admin); answers the deleted client' })
  @ApiOkResponse({ type: ClientResponse })
  @ApiErrors(ERRORS.clientNotFound, ERRORS.stillReferencedBy('Client', 'brands'))
  delete(@CurrentScope() scope: AccessScope, @IdParam() id: number): Promise<ClientResponse> {
    return this.clients.delete(scope, id);
  }
}
