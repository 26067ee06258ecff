import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Seals short secrets (webhook signing secrets) for storage: AES-256-GCM under a key derived with
 * HKDF-SHA256 from the service secret, so a copy of the database alone does not reveal them. The
 * service can open them again to sign. Format: v1.<iv>.<ciphertext>.<tag>, base64url.
 */
function keyFor(serviceSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serviceSecret, 'safehold', `safehold ${purpose} v1`, 32));
}

export function seal(serviceSecret: string, purpose: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(serviceSecret, purpose), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv, body, cipher.getAuthTag()]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

export function open(serviceSecret: string, purpose: string, sealed: string): string {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== 'v1' || !iv || !body || !tag) throw new Error('sealed secret has an unknown format');
  const decipher = createDecipheriv(
    'aes-256-gcm',
    keyFor(serviceSecret, purpose),
    Buffer.from(iv, 'base64url'),
  );
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
