import { type DestinationStream, type Logger, pino } from 'pino';

/**
 * Link tokens are bearer secrets: the path segment after /pay/ or /buyer/ never reaches a log,
 * nor the M-Pesa callback's (/rails/mpesa/callback/).
 */
export function redactTokens(url: string): string {
  return url.replace(/\/(pay|buyer|rails\/mpesa\/callback)\/[^/?#]+/g, '/$1/[token]');
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
}

/** The service's JSON logger (pino), with request lines carrying no link tokens. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      serializers: {
        req: (request: LoggedRequest) => ({
          method: request.method,
          url: redactTokens(request.url),
          host: request.host,
          remoteAddress: request.ip,
        }),
      },
    },
    destination,
  );
}
