import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import {
  type Checkout,
  type CheckoutPayment,
  type FieldErrors,
  loadCheckout,
  parseCard,
  parseMobileMoney,
  payFromCheckout,
} from '../operations/checkout.ts';
import { checkoutPage, payablePage, payPath, unknownLinkPage } from './checkout-page.ts';
import type { WebDeps } from './deps.ts';
import { formFields } from './form-body.ts';
import { redirectTo, sendPage } from './layout.ts';

const TokenParams = Type.Object({ token: Type.String() });

type Parsed = { ok: true; payment: CheckoutPayment } | { ok: false; errors: FieldErrors };

/**
 * The checkout page and its two payment forms. Forms are plain HTML posts answered with a 303
 * back to the page (or to the 3-D Secure challenge), so they work without any script.
 */
export const checkoutRoutes: FastifyPluginAsyncTypebox<WebDeps> = async (app, { ctx }) => {
  app.get('/pay/:token', { schema: { hide: true, params: TokenParams } }, async (request, reply) => {
    const { token } = request.params;
    const checkout = await loadCheckout(ctx, token);
    return sendPage(reply, checkout ? checkoutPage(token, checkout) : unknownLinkPage());
  });

  async function pay(
    reply: FastifyReply,
    token: string,
    form: Record<string, string>,
    parse: (form: Record<string, string>) => Parsed,
  ): Promise<FastifyReply> {
    const checkout: Checkout | undefined = await loadCheckout(ctx, token);
    if (!checkout) return sendPage(reply, unknownLinkPage());
    if (checkout.state !== 'payable') return redirectTo(reply, payPath(token));
    const parsed = parse(form);
    if (!parsed.ok) {
      return sendPage(reply, payablePage(token, checkout, { errors: parsed.errors, phone: form.phone }, 400));
    }
    try {
      const outcome = await payFromCheckout(ctx, token, parsed.payment);
      if (outcome.kind === 'unknown_link') return sendPage(reply, unknownLinkPage());
      if (outcome.kind === 'started' && outcome.attempt.status === 'requires_action') {
        return redirectTo(reply, `${payPath(token)}/challenge/${encodeURIComponent(outcome.attempt.id)}`);
      }
      return redirectTo(reply, payPath(token));
    } catch (error) {
      // The rail refused to start (no live rail configured, for one): say so on the form.
      if (error instanceof ApiError && error.code === 'invalid_request') {
        return sendPage(
          reply,
          payablePage(token, checkout, { message: error.message, phone: form.phone }, 400),
        );
      }
      throw error;
    }
  }

  app.post(
    '/pay/:token/mobile-money',
    { schema: { hide: true, params: TokenParams } },
    async (request, reply) => pay(reply, request.params.token, formFields(request.body), parseMobileMoney),
  );

  app.post('/pay/:token/card', { schema: { hide: true, params: TokenParams } }, async (request, reply) =>
    pay(reply, request.params.token, formFields(request.body), parseCard),
  );
};
