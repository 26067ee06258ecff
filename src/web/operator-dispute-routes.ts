import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import { addEvidence, evidenceFileHeaders, readEvidenceFile } from '../operations/dispute-evidence.ts';
import { type ResolveInput, resolveDispute } from '../operations/dispute-resolve.ts';
import { disputeQueue, loadCase } from '../operations/operator-console.ts';
import type { WebDeps } from './deps.ts';
import { formFields } from './form-body.ts';
import { type CasePageOptions, casePage, type ResolveFormValues } from './operator-case-page.ts';
import { consoleOf, navOf } from './operator-guard.ts';
import { type Notice, notFoundPage, seeOther, sendOperatorPage } from './operator-layout.ts';
import { casePath, type EnvFilter, queuePage } from './operator-queue-page.ts';

const DisputeParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
const EvidenceParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  evidenceId: Type.String({ maxLength: 100 }),
});

const DECISIONS = new Set(['seller', 'buyer', 'split']);
/** A major-unit amount as typed: digits, at most one decimal point. The currency's own rules follow. */
const AMOUNT = /^\d{1,13}(?:\.\d{1,6})?$/;

type Parsed = { ok: true; input: ResolveInput } | { ok: false; param: string; message: string };

/** The resolve form's text fields into the operation's input; amounts only for a split. */
export function parseResolveForm(form: ResolveFormValues): Parsed {
  const decision = form.decision ?? '';
  if (!DECISIONS.has(decision)) {
    return { ok: false, param: 'decision', message: 'Choose a decision: seller, buyer or split.' };
  }
  const input: ResolveInput = { decision: decision as ResolveInput['decision'] };
  const note = form.note?.trim();
  if (note) input.note = note;
  if (decision !== 'split') return { ok: true, input };
  for (const name of ['amount_to_seller', 'amount_to_buyer'] as const) {
    const text = (form[name] ?? '').trim().replaceAll(',', '');
    if (text === '') continue;
    if (!AMOUNT.test(text)) {
      return { ok: false, param: name, message: `${name} must be an amount such as 750 or 750.50.` };
    }
    input[name] = Number(text);
  }
  return { ok: true, input };
}

const newIdempotencyKey = () => `console_${randomBytes(18).toString('base64url')}`;

function queueEnv(value: unknown): EnvFilter {
  return value === 'live' || value === 'test' ? value : 'all';
}

/** A refusal the case page shows beside its form (bad input, a decided case, a gone dispute); else rethrown. */
function refusalOf(error: unknown): ApiError {
  if (error instanceof ApiError && ['invalid_request', 'conflict', 'not_found'].includes(error.code))
    return error;
  throw error;
}

/** The dispute queue and the case pages (behind the console's session guard). */
export const operatorDisputeRoutes: FastifyPluginAsyncTypebox<WebDeps> = async (app, { ctx }) => {
  async function showCase(
    request: FastifyRequest,
    reply: FastifyReply,
    id: string,
    options: Omit<CasePageOptions, 'idempotencyKey'> = {},
  ): Promise<FastifyReply> {
    const found = await loadCase(ctx, id);
    if (!found) return sendOperatorPage(reply, notFoundPage(`No dispute has the id ${id}.`, navOf(request)));
    return sendOperatorPage(
      reply,
      casePage(found, navOf(request, 'disputes'), { ...options, idempotencyKey: newIdempotencyKey() }),
    );
  }

  app.get('/operator/disputes', { schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const env = queueEnv(query.env);
    const after =
      typeof query.after === 'string' && /^dsp_[0-9A-Z]{26}$/.test(query.after) ? query.after : undefined;
    const queue = await disputeQueue(ctx, { livemode: env === 'all' ? undefined : env === 'live', after });
    return sendOperatorPage(reply, queuePage(queue, env, navOf(request, 'disputes')));
  });

  app.get(
    '/operator/disputes/:id',
    { schema: { hide: true, params: DisputeParams } },
    async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      let notice: Notice | undefined;
      if (query.resolved === '1') notice = { kind: 'ok', heading: 'Decision recorded' };
      else if (query.replayed === '1') {
        notice = {
          kind: 'info',
          heading: 'Already recorded',
          text: 'This form had already been sent; nothing changed.',
        };
      } else if (query.noted === '1') notice = { kind: 'ok', heading: 'Note added' };
      return showCase(request, reply, request.params.id, { notice });
    },
  );

  app.get(
    '/operator/disputes/:id/evidence/:evidenceId',
    { schema: { hide: true, params: EvidenceParams } },
    async (request, reply) => {
      const { id, evidenceId } = request.params;
      const found = await readEvidenceFile(ctx, id, evidenceId);
      if (!found) {
        return sendOperatorPage(
          reply,
          notFoundPage('No such evidence file on this dispute.', navOf(request)),
        );
      }
      reply.headers({
        ...evidenceFileHeaders(found.file),
        'Cross-Origin-Resource-Policy': 'same-origin',
        'Referrer-Policy': 'no-referrer',
        'X-Frame-Options': 'DENY',
      });
      return reply.code(200).send(found.file.data);
    },
  );

  app.post(
    '/operator/disputes/:id/resolve',
    { schema: { hide: true, params: DisputeParams } },
    async (request, reply) => {
      const { id } = request.params;
      const fields = formFields(request.body);
      const values: ResolveFormValues = {
        decision: fields.decision,
        amount_to_seller: fields.amount_to_seller,
        amount_to_buyer: fields.amount_to_buyer,
        note: fields.note,
      };
      const parsed = parseResolveForm(values);
      if (!parsed.ok) {
        return showCase(request, reply, id, {
          status: 400,
          resolveForm: { ...values, errorParam: parsed.param },
          notice: { kind: 'error', heading: 'The decision was not recorded', text: parsed.message },
        });
      }
      try {
        const { replayed } = await resolveDispute(ctx, id, parsed.input, fields.idempotency_key || undefined);
        request.log.info(
          {
            keyId: consoleOf(request).operator.keyId,
            disputeId: id,
            decision: parsed.input.decision,
            replayed,
          },
          'operator resolved a dispute from the console',
        );
        return seeOther(reply, `${casePath(id)}?${replayed ? 'replayed' : 'resolved'}=1#outcome-title`);
      } catch (error) {
        const refusal = refusalOf(error);
        return showCase(request, reply, id, {
          status: refusal.status,
          resolveForm: { ...values, errorParam: refusal.param },
          notice: { kind: 'error', heading: 'The decision was not recorded', text: refusal.message },
        });
      }
    },
  );

  app.post(
    '/operator/disputes/:id/notes',
    { schema: { hide: true, params: DisputeParams } },
    async (request, reply) => {
      const { id } = request.params;
      const content = formFields(request.body).content ?? '';
      try {
        await addEvidence(ctx, id, 'operator', { kind: 'text', content });
        return seeOther(reply, `${casePath(id)}?noted=1#evidence-operator`);
      } catch (error) {
        const refusal = refusalOf(error);
        return showCase(request, reply, id, {
          status: refusal.status,
          noteText: content,
          notice: { kind: 'error', heading: 'The note was not added', text: refusal.message },
        });
      }
    },
  );
};
