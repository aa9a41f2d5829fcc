import { documentErrors } from '../../src/common/openapi/error-responses.js';
import { toJsonSchema2020 } from '../../src/common/openapi/openapi-31.js';

describe('OpenAPI 3.0 → 3.1 schemas', () => {
  it('turns nullable types, references and enums into forms that accept null', () => {
    const schema = {
      type: 'object',
      properties: {
        note: { type: 'string', nullable: true },
        point: { nullable: true, type: 'object', allOf: [{ $ref: '#/components/schemas/Point' }] },
        state: { type: 'string', enum: ['A', 'B'], nullable: true },
        ids: { type: 'array', items: { type: 'integer', nullable: true } },
        plain: { type: 'integer', nullable: false },
      },
    };
    toJsonSchema2020(schema);
    expect(schema.properties).toEqual({
      note: { type: ['string', 'null'] },
      point: { oneOf: [{ $ref: '#/components/schemas/Point' }, { type: 'null' }] },
      state: { type: ['string', 'null'], enum: ['A', 'B', null] },
      ids: { type: 'array', items: { type: ['integer', 'null'] } },
      plain: { type: 'integer' },
    });
  });

  it('refuses a nullable schema it cannot express', () => {
    expect(() => toJsonSchema2020({ nullable: true, description: 'no type' })).toThrow(
      /nullable schema without a type/,
    );
  });
});

describe('OpenAPI error responses', () => {
  it('types every error as Error or ValidationError, keeps the examples routes declare and adds what every route can give', () => {
    const operation = {
      parameters: [{ name: 'id', in: 'path' }],
      responses: {
        200: { description: 'ok' },
        404: {
          description: 'Missing',
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/Error' },
              examples: { trackerNotFound: { summary: 'Tracker not found', value: { detail: 'Tracker not found' } } },
            },
          },
        },
        409: {
          description: 'Rows',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ImportFailure' } } },
        },
      },
    };
    documentErrors(operation);
    const responses = operation.responses as Record<
      string,
      { content?: Record<string, { schema: unknown; examples?: Record<string, { value: unknown }> }> }
    >;
    expect(Object.keys(responses).sort()).toEqual(['200', '404', '409', '422', '500', '503']);
    expect(responses['200'].content).toBeUndefined();
    expect(responses['404'].content!['application/json']).toEqual({
      schema: { $ref: '#/components/schemas/Error' },
      examples: { trackerNotFound: { summary: 'Tracker not found', value: { detail: 'Tracker not found' } } },
    });
    expect(responses['409'].content!['application/json'].schema).toEqual({
      anyOf: [{ $ref: '#/components/schemas/ImportFailure' }, { $ref: '#/components/schemas/Error' }],
    });
    expect(responses['422'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ValidationError',
    });
    expect(Object.values(responses['503'].content!['application/json'].examples!).map((e) => e.value)).toEqual([
      { detail: 'Service temporarily unavailable' },
    ]);
  });

  it('adds 413 and 415 to routes with a body', () => {
    const operation = { requestBody: { content: {} }, responses: {} };
    documentErrors(operation);
    expect(Object.keys(operation.responses).sort()).toEqual(['413', '415', '422', '500', '503']);
  });

  it('adds neither 422 nor 413 nor 415 to a route that answers refused input as its own error, and drops the mark', () => {
    const operation: Record<string, unknown> = {
      parameters: [{ name: 'id', in: 'query' }],
      requestBody: { content: {} },
      responses: {},
      'x-input-refusal': true,
    };
    documentErrors(operation);
    expect(Object.keys(operation.responses as object).sort()).toEqual(['500', '503']);
    expect(operation).not.toHaveProperty('x-input-refusal');
  });
});
