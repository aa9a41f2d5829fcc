import { RequestMethod, type INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Reflector } from '@nestjs/core';
import { SwaggerModule } from '@nestjs/swagger';
import cookieParser from 'cookie-parser';
import helmet from 'helmet';
import { Logger, PinoLogger } from 'nestjs-pino';
import type { NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import { JwtStrategy } from './auth/jwt.strategy.js';
import { API_KEY_AUTHENTICATOR, presentedApiKey, type ApiKeyAuthenticator } from './common/auth/api-key.js';
import { CachedAnswers } from './infrastructure/cache/cached-answers.js';
import { HttpMetricsMiddleware } from './metrics/http-metrics.middleware.js';
import type { AppConfig } from './common/config/app-config.js';
import { API_PREFIX } from './common/http/api-prefix.js';
import { createValidationPipe } from './common/http/validation.pipe.js';
import { createOpenApiDocument } from './common/openapi/openapi-document.js';
import { fixedHeaders } from './infrastructure/http/fixed-headers.js';
import { boundIdleConnections } from './infrastructure/http/connection-timeouts.js';
import { requestIdMiddleware } from './infrastructure/http/request-id.middleware.js';
import { requestLogMiddleware } from './infrastructure/logging/logging.module.js';
import { RequestBodyInterceptor } from './common/http/request-body.interceptor.js';

/**
 * Everything about the HTTP app that is not a module: prefix, pipes, security headers, CORS,
 * cookies and OpenAPI. Shared by main.ts and the test harness so tests run the real thing.
 */
export function configureApp(app: INestApplication, config: AppConfig): void {
  const express = app as NestExpressApplication;
  // First in the stack: every response, including docs, static assets and 404s, carries the id.
  app.use(requestIdMiddleware);
  // Then a log line and the latency metric for every request, including those no route or guard lets through.
  const logger = app.get(Logger);
  app.use(requestLogMiddleware(PinoLogger.root));
  const metrics = app.get(HttpMetricsMiddleware);
  app.use((req: Request, res: Response, next: NextFunction) => metrics.use(req, res, next));
  boundIdleConnections(app.getHttpServer() as Server, config.httpFirstByteTimeoutMs);
  express.useLogger(logger);
  express.set('trust proxy', config.trustProxy ? 1 : false);
  express.disable('x-powered-by');
  setGlobalPrefix(app);
  app.useGlobalPipes(createValidationPipe());
  // helmet's headers depend only on the config: recorded once, set per response in one step.
  app.use(
    fixedHeaders(
      helmet({
        contentSecurityPolicy: {
          directives: {
            // Swagger UI needs inline styles; images set their own stricter CSP.
            'script-src': ["'self'"],
            'style-src': ["'self'", "'unsafe-inline'"],
            // Only when https is the way in: over plain http the browser would rewrite every asset
            // of /docs to https and load none of them.
            'upgrade-insecure-requests': config.behindTls ? [] : null,
          },
        },
        // HSTS pins the host to https for a year; only a service reached over TLS may ask for that.
        strictTransportSecurity: config.behindTls ? { maxAge: 31_536_000, includeSubDomains: true } : false,
      }),
    ),
  );
  app.use(cookieParser());
  app.enableCors({
    origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
    credentials: true,
    exposedHeaders: ['X-Request-ID', 'X-Cache', 'Content-Disposition', 'Retry-After'],
  });
  // JSON and form bodies are read after the guard, with each route's own limit (request-body.interceptor.ts).
  app.useGlobalInterceptors(new RequestBodyInterceptor(app.get(Reflector)));
  // Last before routing: answers this caller was given before and that are still current.
  const strategy = app.get(JwtStrategy);
  const keys = app.get<ApiKeyAuthenticator>(API_KEY_AUTHENTICATOR);
  app.use(
    app.get(CachedAnswers).middleware((req) => {
      const key = presentedApiKey(req);
      return key === undefined ? strategy.knownCaller(req) : keys.knownCaller(key, req);
    }),
  );

  const document = createOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'openapi.json',
    swaggerOptions: { persistAuthorization: true },
  });
}

/** `/api/v1` before every route but the two whose paths are conventions of their scrapers and the public tracking page's. */
export function setGlobalPrefix(app: INestApplication): void {
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [
      { path: 'health/db-pool', method: RequestMethod.GET },
      // Prometheus scrapes /metrics by convention.
      { path: 'metrics', method: RequestMethod.GET },
      // A share link's page and its assets: short public URLs outside the API.
      { path: 'track/:token', method: RequestMethod.GET },
      { path: 'track-assets/:name', method: RequestMethod.GET },
    ],
  });
}
