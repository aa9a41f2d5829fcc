/**
 * DataSource for the TypeORM CLI (`npm run migration:*`). Uses DATABASE_URL; without it, the
 * embedded PostgreSQL that `npm start` runs (start the service once first).
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../common/config/app-config.js';
import { dataSourceOptions } from './data-source-options.js';
import { EMBEDDED_DATABASE_NAME } from './database.constants.js';

const config = loadConfig(process.env);
const url =
  config.databaseUrl ?? `postgres://postgres:postgres@127.0.0.1:${config.embeddedPgPort}/${EMBEDDED_DATABASE_NAME}`;

export default new DataSource(dataSourceOptions(config, url));
