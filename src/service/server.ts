import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { MAX_ARTIFACT_NAME } from '../protocol/agent-api.js';
import { VERSION } from '../version.js';
import { declareTags, hoistNamedSchemas } from './openapi-components.js';
import { nameOperations } from './openapi-operation-ids.js';
import { liftParameterSerialization } from './openapi-parameters.js';
import { agentAuth, checklyDialectErrors, userAuth } from './auth.js';
import type { ServiceContext } from './context.js';
import { reportDatabaseFailure } from './db/connection-errors.js';
import { errorHandler, routeErrorShape, sendErrorA } from './http-errors.js';
import { ErrorA, ErrorB } from './schemas/common.js';
import { accountRoutes } from './routes/account.js';
import { agentRoutes } from './routes/agent.js';
import { metricsRoutes } from './routes/metrics.js';
import { nextAccountRoutes } from './routes/next-accounts.js';
import { instrumentHttp } from './http-metrics.js';
import { agentErrorEventRoutes, errorEventReadRoutes } from './routes/agent-error-events.js';
import { alertChannelRoutes } from './routes/alert-channels.js';
import { analyticsRoutes } from './routes/analytics.js';
import { maintenanceWindowRoutes } from './routes/maintenance-windows.js';
import { memberRoutes } from './routes/members.js';
import { checkGroupRoutes } from './routes/check-groups.js';
import { checkSessionRoutes } from './routes/check-sessions.js';
import { checkResultRoutes } from './routes/check-results.js';
import { checkStatusRoutes } from './routes/check-statuses.js';
import { errorGroupRoutes } from './routes/error-groups.js';
import { artifactRoutes } from './routes/artifacts.js';
import { checkRoutes } from './routes/checks.js';
import { dashboardRoutes } from './dashboard.js';
import { agentCodeBundleRoutes, codeBundleRoutes } from './routes/code-bundles.js';
import { registerRateLimit } from './rate-limit.js';
import { privateLocationRoutes } from './routes/private-locations.js';
import { projectRoutes } from './routes/projects.js';
import { publicStatusRoutes } from './routes/public-status.js';
import { rootCauseAnalysisRoutes } from './routes/root-cause-analyses.js';
import { runtimeRoutes } from './routes/runtimes.js';
import { statusPageRoutes } from './routes/status-pages.js';
import { testSessionRoutes } from './routes/test-sessions.js';
import { variableRoutes } from './routes/variables.js';
import { validatorCompiler } from './validation.js';

/** How long /-/readiness and /health wait for the database's SELECT 1. */
const READINESS_TIMEOUT_MS = 2000;

export async function buildServer(ctx: ServiceContext): Promise<FastifyInstance> {
  const httpLogger: FastifyBaseLogger = ctx.logger.child({ component: 'http' });
  const app = Fastify({
    loggerInstance: httpLogger,
    // Agents long-poll all day; a line per request would drown the log.
    logController: new LogController({ disableRequestLogging: true }),
    // Long polls hold requests up to 30 s; keep-alive must outlast them.
    keepAliveTimeout: 65_000,
    bodyLimit: 2 * 1024 * 1024,
    // The router refuses longer path parameters with 414 before any schema runs; an artifact's name may be this long.
    routerOptions: { maxParamLength: MAX_ARTIFACT_NAME + 56 },
  }).withTypeProvider<TypeBoxTypeProvider>();
  instrumentHttp(app, ctx.metrics.http);
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
  app.setErrorHandler<FastifyError>((error, request, reply) => {
    // Each outage is told once, with the first thing that failed, not a line per request.
    reportDatabaseFailure(ctx.db.outage, request.log, `${request.method} ${request.routeOptions.url ?? 'request'}`, error);
    return errorHandler(error, request, reply);
  });
  app.setNotFoundHandler((request, reply) => sendErrorA(reply, 404, `Route ${request.method} ${request.url} not found`));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Outpost Monitoring Service API',
        version: VERSION,
        description: 'Checks, check sessions, private locations and the agent protocol.',
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      servers: [{ url: ctx.baseUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'Account API key' },
          account: { type: 'apiKey', in: 'header', name: 'x-service-account', description: 'Or x-checkly-account, as the public checkly CLI sends it' },
          privateLocationKey: { type: 'http', scheme: 'bearer', description: 'Private location key (pl_…)' },
        },
      },
      security: [{ apiKey: [], account: [] }],
    },
    transformObject: (document) =>
      'openapiObject' in document
        ? declareTags(hoistNamedSchemas(liftParameterSerialization(nameOperations(document.openapiObject))))
        : document.swaggerObject,
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
  // 200 while the process serves, saying whether the database answers; readiness is what turns 503 without it.
  app.get('/health', { schema: { hide: true } }, async () => {
    const check = await ctx.db.check(READINESS_TIMEOUT_MS);
    return {
      status: check.reachable ? 'ok' : 'degraded',
      version: VERSION,
      database: { kind: ctx.db.kind, reachable: check.reachable, ...(check.error ? { error: check.error } : {}) },
    };
  });
  app.get('/-/liveness', { schema: { hide: true } }, () => ({ status: 'alive' }));
  // Ready when the database answers a SELECT 1 in time: a load balancer sends no requests that would only fail.
  app.get('/-/readiness', { schema: { hide: true } }, async (_request, reply) => {
    const check = await ctx.db.check(READINESS_TIMEOUT_MS);
    if (check.reachable) return { status: 'ready', database: { kind: ctx.db.kind, reachable: true, ms: check.ms } };
    return reply.code(503).send({
      status: 'database-unreachable',
      reason: `The database is unreachable: ${check.error ?? 'no answer'}`,
      database: { kind: ctx.db.kind, reachable: false, error: check.error },
    });
  });

  await app.register(async (user) => {
    user.addHook(
      'onRequest',
      userAuth(ctx.db, { accountHeaderOptional: (request) => request.url.startsWith('/v1/check-sessions/') }),
    );
    // Callers that name their account in x-checkly-account (the public checkly CLI) read errors as {statusCode, error, message}.
    user.addHook('onSend', checklyDialectErrors);
    // On PostgreSQL every instance counts in one table; PGlite serves one instance, whose memory is enough.
    await registerRateLimit(user, ctx.rateLimit, ctx.db.kind === 'postgres' ? ctx.db : undefined);
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
    await user.register(checkResultRoutes(ctx));
    await user.register(checkStatusRoutes(ctx));
    await user.register(errorGroupRoutes(ctx));
    await user.register(analyticsRoutes(ctx));
    await user.register(runtimeRoutes());
    await user.register(codeBundleRoutes(ctx));
    await user.register(variableRoutes(ctx));
    await user.register(accountRoutes(ctx));
    await user.register(memberRoutes(ctx));
    await user.register(nextAccountRoutes(ctx));
    await user.register(maintenanceWindowRoutes(ctx));
    await user.register(statusPageRoutes(ctx));
    await user.register(rootCauseAnalysisRoutes(ctx));
    await user.register(alertChannelRoutes(ctx));
    await user.register(projectRoutes(ctx));
    await user.register(testSessionRoutes(ctx));
  });

  await app.register(publicStatusRoutes(ctx));
  // The web dashboard's static files at / and /assets/…; it calls the user API like any client.
  await app.register(dashboardRoutes());
  // Signed links, no API key: outside the user API's authentication.
  await app.register(artifactRoutes(ctx));
  await app.register(metricsRoutes(ctx.metrics.registry, ctx.metricsToken));

  await app.register(async (agent) => {
    agent.addHook('onRequest', agentAuth(ctx.agentKeys));
    await agent.register(agentRoutes(ctx));
    await agent.register(agentCodeBundleRoutes(ctx));
    await agent.register(agentErrorEventRoutes(ctx));
  });

  return app;
}
