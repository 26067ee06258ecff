import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/** The OpenAPI 3.1 document is generated from the route schemas; nothing is written by hand. */
export async function installOpenApi(app: FastifyInstance, publicUrl: () => string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Safehold API',
        version: '1.0.0',
        description:
          'Conditional-settlement (escrow) payments. Errors use the envelope ' +
          '{ error: { code, message, request_id, type, param? } }; every response carries X-Request-Id. ' +
          'Decisions where the specification is silent are in docs/api-decisions.md.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'sk_test_…, sk_live_… or sk_op_…' },
        },
      },
    },
    // Read when the document is first generated: with PORT=0 the public URL is known only after listen.
    transformObject: (doc) =>
      'openapiObject' in doc ? { ...doc.openapiObject, servers: [{ url: publicUrl() }] } : doc.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
