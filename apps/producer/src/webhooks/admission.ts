import { ApiError } from '../http-errors';
import type { WebhookSettings } from '../options';

/**
 * Refuses (422 `invalid_webhook`, naming `field`) a webhook URL this server may not send to:
 * webhooks off, not http(s), a host not allowed, a loopback or private address not listed.
 * Nothing is written before this check.
 */
export function checkWebhook(settings: WebhookSettings, url: string | null | undefined, field: string): string | undefined {
  if (url === undefined || url === null) return undefined;
  const problem = settings.destinations.problem(url);
  if (problem) throw new ApiError(422, 'invalid_webhook', `${field} ${problem}.`);
  return url;
}
