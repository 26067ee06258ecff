import { type Currency, toMajorUnits } from '../domain/money.ts';
import type { MailMessage } from '../mail/mailer.ts';
import type { TransactionRow } from '../store/transactions.ts';
import type { ServiceContext } from './context.ts';
import { buyerLinkUrl } from './transaction-view.ts';

/** The e-mail that gives a buyer their page (confirm receipt), sent once the payment is held. */
export function buyerLinkMessage(
  ctx: Pick<ServiceContext, 'publicUrl' | 'linkSecret'>,
  row: TransactionRow,
): MailMessage | undefined {
  const to = row.customer?.email;
  if (!to) return undefined;
  const amount = `${row.currency} ${toMajorUnits(row.amount_minor, row.currency as Currency)}`;
  return {
    to,
    subject: `Your payment for "${row.title}" is protected`,
    text: [
      `Your payment of ${amount} for "${row.title}" is held safely by Safehold.`,
      'The seller is paid only when you confirm that you received what you ordered, or when the review',
      `window of ${row.release_condition.review_window_days} days after delivery ends.`,
      '',
      'Your buyer page (keep this link to yourself):',
      buyerLinkUrl(ctx, row.id),
    ].join('\n'),
  };
}
