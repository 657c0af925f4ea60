import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../http-errors';
import type { RouteDeps } from '../options';
import { ErrorBody } from '../schemas';
import { admissionTenant } from '../security';
import { secretText, tenantSecret } from './signing';

const SecretAnswer = z.object({
  tenant: z.string(),
  secret: z.string().describe('`whsec_` + base64 of the HMAC-SHA256 key: verify `webhook-signature` with it (SECURITY.md)'),
});

/** GET /v1/webhooks/secret: the caller's tenant's signing secret, for the receivers of its webhooks. */
export async function webhookRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.get(
    '/v1/webhooks/secret',
    {
      schema: {
        summary: "Your tenant's webhook signing secret",
        description: 'The key receivers check webhook-signature with (Standard Webhooks). 404 when this server sends no webhooks.',
        tags: ['jobs'],
        response: { 200: SecretAnswer, 404: ErrorBody },
      },
    },
    async (request) => {
      const { signingKey } = deps.webhooks;
      if (!deps.webhooks.destinations.enabled || !signingKey)
        throw new ApiError(404, 'not_found', 'This server sends no webhooks (WEBHOOK_ALLOWED_HOSTS is unset).');
      const tenant = admissionTenant(request);
      return { tenant, secret: secretText(tenantSecret(signingKey, tenant)) };
    },
  );
}
