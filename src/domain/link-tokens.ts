import { createHash, createHmac } from 'node:crypto';

/**
 * Share-safe link tokens. A token is HMAC-SHA256(service secret, link id): 256 bits an outsider
 * cannot guess, carrying no PII or amount. Only sha256(token) is stored, and the service can
 * rebuild the URL from the id when it shows the transaction again.
 */
export function linkToken(secret: string, linkId: string): string {
  return createHmac('sha256', secret).update(linkId).digest('base64url');
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The buyer page's token for a transaction: derived like a payment link's, from its own message. */
export function buyerToken(secret: string, transactionId: string): string {
  return linkToken(secret, `buyer:${transactionId}`);
}
