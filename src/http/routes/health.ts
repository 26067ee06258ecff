import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../domain/errors.ts';
import { ErrorEnvelope } from '../../schemas/common.ts';
import type { RouteDeps } from './deps.ts';

const Status = Type.Object({ status: Type.String() });

export const healthRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { ctx }) => {
  app.get(
    '/healthz',
    { schema: { tags: ['Operations'], summary: 'The process is up', response: { 200: Status } } },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'The database answers',
        response: { 200: Status, 503: ErrorEnvelope },
      },
    },
    async (request) => {
      try {
        await ctx.db.query('SELECT 1');
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        throw new ApiError('internal_error', 'The database is not reachable.', { status: 503 });
      }
      return { status: 'ready' };
    },
  );
};
