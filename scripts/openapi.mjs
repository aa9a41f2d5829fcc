// Writes the service's OpenAPI document to a file (default dist/openapi.json) without a database,
// Redis or a listening server: Nest's preview mode builds the module graph and the routes'
// metadata but runs no provider, so the document is exactly what /openapi.json serves.
// Usage: node scripts/openapi.mjs [output-path]   (builds dist/ first when it is stale)
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const output = resolve(process.argv[2] ?? 'dist/openapi.json');
execFileSync(process.execPath, [resolve(root, 'scripts/build-if-needed.mjs')], { cwd: root, stdio: 'inherit' });

const load = (path) => import(pathToFileURL(resolve(root, 'dist/src', path)).href);
const { NestFactory } = await import('@nestjs/core');
const { AppModule } = await load('app.module.js');
const { setGlobalPrefix } = await load('app.setup.js');
const { loadConfig } = await load('common/config/app-config.js');
const { ExpressHttpAdapter } = await load('infrastructure/http/express-http-adapter.js');
const { createOpenApiDocument } = await load('common/openapi/openapi-document.js');

// Placeholders only: in preview mode nothing connects anywhere.
const config = loadConfig({
  NODE_ENV: 'production',
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'openapi-generator-placeholder-secret-0123456789',
  DATABASE_URL: 'postgres://openapi@127.0.0.1:5432/openapi',
  SEED_DEMO_DATA: 'false',
});
const app = await NestFactory.create(AppModule.forRoot(config), new ExpressHttpAdapter(), { preview: true, logger: false });
setGlobalPrefix(app);
const document = createOpenApiDocument(app);
await app.close();
mkdirSync(dirname(output), { recursive: true });
writeFileSync(output, `${JSON.stringify(document, null, 2)}\n`);
console.log(`OpenAPI document written to ${output}`);
