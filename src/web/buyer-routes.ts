import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import { type BuyerView, confirmAsBuyer, loadBuyerView } from '../operations/buyer-actions.ts';
import {
  addBuyerEvidence,
  loadBuyerDispute,
  openDisputeAsBuyer,
  readBuyerEvidenceFile,
} from '../operations/dispute-buyer.ts';
import { type EvidenceInput, evidenceFileHeaders } from '../operations/dispute-evidence.ts';
import {
  type BuyerNotice,
  type BuyerPageOptions,
  buyerPage,
  buyerPath,
  unknownBuyerPage,
} from './buyer-page.ts';
import type { WebDeps } from './deps.ts';
import { formFields, installMultipart, type MultipartForm, readMultipartForm } from './form-body.ts';
import { redirectTo, sendPage } from './layout.ts';

const TokenParams = Type.Object({ token: Type.String() });
const EvidenceParams = Type.Object({ token: Type.String(), evidence_id: Type.String() });

function cannotConfirm(view: BuyerView): BuyerNotice {
  if (view.status === 'confirmed' || view.status === 'released') {
    return {
      kind: 'info',
      heading: 'Already confirmed',
      text: 'This purchase is already confirmed; there is nothing more to do.',
    };
  }
  const why: Record<string, string> = {
    pending_payment: 'It has not been paid yet.',
    cancelled: 'It was cancelled.',
    expired: 'It expired before it was paid.',
    refunded: 'It was refunded.',
    disputed: 'A problem report about it is open.',
    under_review: 'It is under review.',
  };
  return {
    kind: 'error',
    heading: 'This purchase cannot be confirmed now',
    text: why[view.status] ?? 'Its status does not allow it.',
  };
}

/** What the buyer is told when a dispute form cannot be taken. */
function disputeNotice(error: ApiError, what: 'dispute' | 'evidence'): BuyerNotice {
  if (error.code === 'conflict') {
    return {
      kind: 'error',
      heading: what === 'dispute' ? 'A dispute cannot be opened now' : 'Evidence cannot be added now',
      text:
        what === 'dispute'
          ? `${error.message} A dispute can be opened while the money is held, before you confirm.`
          : error.message,
    };
  }
  return { kind: 'error', heading: 'Please check the form', text: error.message };
}

/** A form post's fields and file: multipart (the page's forms) or urlencoded (no file). */
async function formOf(request: FastifyRequest, fields: readonly string[]): Promise<MultipartForm> {
  if (request.isMultipart()) return readMultipartForm(request, fields);
  return { fields: formFields(request.body), file: undefined };
}

/** The buyer page, its confirm action, and the buyer's side of a dispute. */
export const buyerRoutes: FastifyPluginAsyncTypebox<WebDeps> = async (app, { ctx }) => {
  // The dispute forms carry files: multipart is read on the buyer routes only.
  await installMultipart(app);

  const render = async (
    reply: FastifyReply,
    token: string,
    options: Omit<BuyerPageOptions, 'dispute'> = {},
  ): Promise<FastifyReply> => {
    const view = await loadBuyerView(ctx, token);
    if (!view) return sendPage(reply, unknownBuyerPage());
    const dispute = await loadBuyerDispute(ctx, token);
    return sendPage(reply, buyerPage(token, view, { ...options, dispute }));
  };

  /** Runs a form action; a refused one shows the page again with why, and what was typed. */
  const formAction = async (
    reply: FastifyReply,
    token: string,
    what: 'dispute' | 'evidence',
    action: () => Promise<unknown>,
    typed: BuyerPageOptions['form'],
  ): Promise<FastifyReply> => {
    try {
      await action();
      return redirectTo(reply, buyerPath(token));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'authentication_failed') return sendPage(reply, unknownBuyerPage());
      if (error.code !== 'conflict' && error.code !== 'invalid_request') throw error;
      return render(reply, token, { notice: disputeNotice(error, what), status: error.status, form: typed });
    }
  };

  app.get('/buyer/:token', { schema: { hide: true, params: TokenParams } }, async (request, reply) =>
    render(reply, request.params.token),
  );

  app.post(
    '/buyer/:token/confirm',
    { schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const { token } = request.params;
      try {
        await confirmAsBuyer(ctx, token);
        return redirectTo(reply, buyerPath(token));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.code === 'authentication_failed') return sendPage(reply, unknownBuyerPage());
        if (error.code !== 'conflict') throw error;
        const view = await loadBuyerView(ctx, token);
        if (!view) return sendPage(reply, unknownBuyerPage());
        return render(reply, token, { notice: cannotConfirm(view), status: 409 });
      }
    },
  );

  app.post(
    '/buyer/:token/dispute',
    { schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const { token } = request.params;
      const typed: NonNullable<BuyerPageOptions['form']> = {};
      return formAction(
        reply,
        token,
        'dispute',
        async () => {
          const { fields, file } = await formOf(request, ['reason', 'description']);
          typed.reason = fields.reason;
          typed.description = fields.description;
          await openDisputeAsBuyer(ctx, token, {
            reason: fields.reason ?? '',
            description: fields.description ?? '',
            // A form sent without a chosen file still has an empty file part.
            file: file && file.data.byteLength > 0 ? file : undefined,
          });
        },
        typed,
      );
    },
  );

  app.post(
    '/buyer/:token/dispute/evidence',
    { schema: { hide: true, params: TokenParams } },
    async (request, reply) => {
      const { token } = request.params;
      const typed: NonNullable<BuyerPageOptions['form']> = {};
      return formAction(
        reply,
        token,
        'evidence',
        async () => {
          const { fields, file } = await formOf(request, ['text']);
          typed.text = fields.text;
          await addBuyerEvidence(ctx, token, evidenceOf(fields.text, file));
        },
        typed,
      );
    },
  );

  app.get(
    '/buyer/:token/evidence/:evidence_id',
    { schema: { hide: true, params: EvidenceParams } },
    async (request, reply) => {
      const file = await readBuyerEvidenceFile(ctx, request.params.token, request.params.evidence_id);
      if (!file) return sendPage(reply, unknownBuyerPage());
      return reply.headers(evidenceFileHeaders(file)).send(file.data);
    },
  );
};

/** The evidence form: a file (the note describes it), or else the note alone. */
function evidenceOf(text: string | undefined, file: MultipartForm['file']): EvidenceInput {
  const note = text?.trim() === '' ? undefined : text;
  if (file && file.data.byteLength > 0) {
    return { kind: 'file', fileName: file.fileName, data: file.data, description: note };
  }
  if (note === undefined) {
    throw new ApiError('invalid_request', 'Write a note or choose a file to add.', { param: 'text' });
  }
  return { kind: 'text', content: note };
}
