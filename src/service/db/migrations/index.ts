import * as initial from './0001-initial.js';
import * as codeBundles from './0002-code-bundles.js';
import * as environmentVariables from './0003-environment-variables.js';
import * as members from './0004-members.js';
import * as checkGroups from './0005-check-groups.js';
import * as maintenanceWindows from './0006-maintenance-windows.js';
import * as statusPages from './0007-status-pages.js';
import * as subscriptionsAndMail from './0008-subscriptions-and-mail.js';
import * as rootCauseAnalyses from './0009-root-cause-analyses.js';
import * as alerts from './0010-alerts.js';
import * as agentErrorEvents from './0011-agent-error-events.js';
import * as jobHeartbeats from './0012-job-heartbeats.js';
import * as resultsApi from './0013-results-api.js';
import * as statusPageBranding from './0014-status-page-branding.js';
import * as jobLanesAndRetries from './0015-job-lanes-and-retries.js';
import * as projects from './0016-projects.js';
import * as testSessions from './0017-test-sessions.js';
import * as destinationPolicies from './0018-destination-policies.js';
import * as severalInstances from './0019-several-instances.js';

export interface Migration {
  name: string;
  sql: string;
}

/** Applied in this order; a migration, once released, is never edited, only followed. */
export const migrations: readonly Migration[] = [initial, codeBundles, environmentVariables, members, checkGroups, maintenanceWindows, statusPages, subscriptionsAndMail, rootCauseAnalyses, alerts, agentErrorEvents, jobHeartbeats, resultsApi, statusPageBranding, jobLanesAndRetries, projects, testSessions, destinationPolicies, severalInstances];
