import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { VERSION } from '../version.js';
import { agentAuth, userAuth } from './auth.js';
import type { ServiceContext } from './context.js';
import { errorHandler, routeErrorShape, sendErrorA } from './http-errors.js';
import { ErrorA, ErrorB } from './schemas/common.js';
import { accountRoutes } from './routes/account.js';
import { agentRoutes } from './routes/agent.js';
import { metricsRoutes } from './routes/metrics.js';
import { createServiceMetrics } from './service-metrics.js';
import { agentErrorEventRoutes, errorEventReadRoutes } from './routes/agent-error-events.js';
import { alertChannelRoutes } from './routes/alert-channels.js';
import { analyticsRoutes } from './routes/analytics.js';
import { maintenanceWindowRoutes } from './routes/maintenance-windows.js';
import { memberRoutes } from './routes/members.js';
import { checkGroupRoutes } from './routes/check-groups.js';
import { checkSessionRoutes } from './routes/check-sessions.js';
import { checkRoutes } from './routes/checks.js';
import { agentCodeBundleRoutes, codeBundleRoutes } from './routes/code-bundles.js';
import { registerRateLimit } from './rate-limit.js';
import { privateLocationRoutes } from './routes/private-locations.js';
import { publicStatusRoutes } from './routes/public-status.js';
import { rootCauseAnalysisRoutes } from './routes/root-cause-analyses.js';
import { runtimeRoutes } from './routes/runtimes.js';
import { statusPageRoutes } from './routes/status-pages.js';
import { variableRoutes } from './routes/variables.js';
import { validatorCompiler } from './validation.js';

export async function buildServer(ctx: ServiceContext): Promise<FastifyInstance> {
  const httpLogger: FastifyBaseLogger = ctx.logger.child({ component: 'http' });
  const app = Fastify({
    loggerInstance: httpLogger,
    // Agents long-poll all day; a line per request would drown the log.
    logController: new LogController({ disableRequestLogging: true }),
    // Long polls hold requests up to 30 s; keep-alive must outlast them.
    keepAliveTimeout: 65_000,
    bodyLimit: 2 * 1024 * 1024,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  // curl -X POST with a JSON content type and no body is common for calls that
  // take no input (creating a key); treat it as no body rather than an error.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(body, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      done(Object.assign(new SyntaxError('The request body is not valid JSON'), { statusCode: 400 }), undefined);
    }
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => sendErrorA(reply, 404, `Route ${request.method} ${request.url} not found`));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Outpost Monitoring Service API',
        version: VERSION,
        description: 'Checks, check sessions, private locations and the agent protocol.',
      },
      servers: [{ url: ctx.baseUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'Account API key' },
          account: { type: 'apiKey', in: 'header', name: 'x-service-account' },
          privateLocationKey: { type: 'http', scheme: 'bearer', description: 'Private location key (pl_…)' },
        },
      },
      security: [{ apiKey: [], account: [] }],
    },
  });

  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  // The older name still answers, for tools configured with it, and says it is deprecated.
  app.get('/swagger.json', { schema: { hide: true } }, (_request, reply) => {
    const document = app.swagger();
    void reply.header('deprecation', 'true').header('link', '</openapi.json>; rel="successor-version"');
    return {
      ...document,
      info: {
        ...document.info,
        description: `Deprecated: this address is kept for older tools and may go away; use /openapi.json. ${document.info.description ?? ''}`.trim(),
      },
      'x-deprecated': true,
    };
  });
  app.get('/health', { schema: { hide: true } }, async () => {
    await ctx.db.query('SELECT 1');
    return { status: 'ok', version: VERSION };
  });

  await app.register(async (user) => {
    user.addHook(
      'onRequest',
      userAuth(ctx.db, { accountHeaderOptional: (request) => request.url.startsWith('/v1/check-sessions/') }),
    );
    await registerRateLimit(user, ctx.rateLimit);
    // Each route's error answers, in /openapi.json and when serialised, take the route's one shape.
    user.addHook('onRoute', (route) => {
      const response = route.schema?.response as Record<string, unknown> | undefined;
      if (!response) return;
      for (const code of Object.keys(response)) {
        if (Number(code) < 400) continue;
        const method = Array.isArray(route.method) ? route.method[0]! : route.method;
        response[code] = routeErrorShape({ method, url: route.url, config: route.config }, Number(code)) === 'A' ? ErrorA : ErrorB;
      }
    });
    await user.register(privateLocationRoutes(ctx));
    await user.register(errorEventReadRoutes(ctx));
    await user.register(checkRoutes(ctx));
    await user.register(checkGroupRoutes(ctx));
    await user.register(checkSessionRoutes(ctx));
    await user.register(analyticsRoutes(ctx));
    await user.register(runtimeRoutes());
    await user.register(codeBundleRoutes(ctx));
    await user.register(variableRoutes(ctx));
    await user.register(accountRoutes(ctx));
    await user.register(memberRoutes(ctx));
    await user.register(maintenanceWindowRoutes(ctx));
    await user.register(statusPageRoutes(ctx));
    await user.register(rootCauseAnalysisRoutes(ctx));
    await user.register(alertChannelRoutes(ctx));
  });

  await app.register(publicStatusRoutes(ctx));
  await app.register(metricsRoutes(createServiceMetrics(ctx.db), ctx.metricsToken));

  await app.register(async (agent) => {
    agent.addHook('onRequest', agentAuth(ctx.agentKeys));
    await agent.register(agentRoutes(ctx));
    await agent.register(agentCodeBundleRoutes(ctx));
    await agent.register(agentErrorEventRoutes(ctx));
  });

  return app;
}
