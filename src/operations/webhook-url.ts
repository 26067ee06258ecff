import { invalid } from '../domain/errors.ts';
import { assertPublicUrl, type Resolver } from './callback-url-guard.ts';

/**
 * A webhook endpoint's URL: absolute, https (http too in test mode), no credentials; in live mode
 * its host must resolve only to public addresses (checked again before every live delivery).
 */
export async function checkWebhookUrl(
  url: string,
  livemode: boolean,
  param = 'url',
  resolve?: Resolver,
): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(param, `${param} must be an absolute URL.`);
  }
  const allowed = livemode ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(parsed.protocol)) {
    throw invalid(
      param,
      livemode ? `${param} must use https in live mode.` : `${param} must use https (or http in test mode).`,
    );
  }
  if (parsed.username || parsed.password) throw invalid(param, `${param} may not carry credentials.`);
  if (livemode) await assertPublicUrl(url, param, resolve);
  return url;
}
