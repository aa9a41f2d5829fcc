import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { Reflector } from '@nestjs/core';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { catchError, from, switchMap, type Observable } from 'rxjs';
import { DomainError } from '../errors/domain-error.js';
import { inputRefusalDetail } from '../errors/request-errors.js';
import { INPUT_REFUSAL, type InputRefusal } from '../errors/input-refusal.js';
import { BODY_LIMIT, DEFAULT_JSON_BODY_LIMIT, FORM_BODY_LIMIT, verifyJsonBody } from './request-body.js';

/** What a route says about its input: its body limit (null: it reads no body) and its own refusal, if any. */
interface RouteInput {
  limit: number | null;
  refusal: InputRefusal | undefined;
}

/**
 * Reads JSON and form bodies, as the first global interceptor: after the guard, so a request the
 * guard refuses (no token, a bad one, a role the route does not admit) is answered 401/403 without
 * its body being read or parsed, and after routing, so each route's own limit applies (@BodyLimit,
 * else DEFAULT_JSON_BODY_LIMIT). Only routes that take a body (a @Body() parameter) read one: any
 * other leaves it unread, as an unknown path does. Multipart bodies are read by the upload routes'
 * own interceptors.
 * Failures (over the limit, malformed, nested too deep) are body-parser's errors, answered by the
 * exception filter as before, except on a route that answers refusals as its own error
 * (RefuseInputAs): there they, and the validation pipe's refusals, become that error here.
 */
@Injectable()
export class RequestBodyInterceptor implements NestInterceptor {
  private readonly jsonParsers = new Map<number, RequestHandler>();
  private readonly formParser = express.urlencoded({ extended: false, limit: FORM_BODY_LIMIT });
  /** Per controller class and handler (a handler may be inherited by several controllers). */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteInput>>();

  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const { limit, refusal } = this.inputOf(context);
    const http = context.switchToHttp();
    const handled =
      limit === null
        ? next.handle()
        : from(this.read(limit, http.getRequest<Request>(), http.getResponse<Response>())).pipe(
            switchMap(() => next.handle()),
          );
    if (refusal === undefined) return handled;
    // Pipes run inside next.handle(): their refusals pass through here as the body's do.
    return handled.pipe(
      catchError((exception: unknown) => {
        const detail = inputRefusalDetail(exception);
        throw detail === undefined ? exception : new DomainError(refusal(detail));
      }),
    );
  }

  private inputOf(context: ExecutionContext): RouteInput {
    const controller = context.getClass();
    const handler = context.getHandler();
    let byHandler = this.routes.get(controller);
    if (!byHandler) this.routes.set(controller, (byHandler = new WeakMap()));
    let input = byHandler.get(handler);
    if (input === undefined) {
      const targets = [handler, controller];
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {}) as object;
      const takesBody = Object.keys(args).some((key) => key.startsWith(`${RouteParamtypes.BODY}:`));
      input = {
        limit: takesBody
          ? (this.reflector.getAllAndOverride<number | undefined>(BODY_LIMIT, targets) ?? DEFAULT_JSON_BODY_LIMIT)
          : null,
        refusal: this.reflector.getAllAndOverride<InputRefusal | undefined>(INPUT_REFUSAL, targets),
      };
      byHandler.set(handler, input);
    }
    return input;
  }

  private async read(limit: number, req: Request, res: Response): Promise<void> {
    // Each parser leaves a request that is not its type alone, and one already read alone.
    await run(this.jsonParser(limit), req, res);
    await run(this.formParser, req, res);
  }

  private jsonParser(limit: number): RequestHandler {
    let parser = this.jsonParsers.get(limit);
    if (!parser) {
      // Nest's option type leaves `verify` out (it uses it for rawBody, which is off) but Express takes it.
      parser = express.json({ limit, verify: verifyJsonBody });
      this.jsonParsers.set(limit, parser);
    }
    return parser;
  }
}

function run(parser: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    void parser(req, res, (error?: unknown) => (error ? reject(error) : resolve()));
  });
}
