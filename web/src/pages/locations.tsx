import { apiGet, type PrivateLocation } from '../api';
import { useCredentials } from '../app';
import { absolute } from '../format';
import { usePoll } from '../hooks';
import { Badge, ErrorNote, Loading, PageTitle, TimeAgo } from '../ui';

export function LocationsPage() {
  const credentials = useCredentials();
  const locations = usePoll((signal) => apiGet<PrivateLocation[]>(credentials, '/v1/private-locations', {}, signal), 5000, [credentials]);
  return (
    <>
      <PageTitle title="Private locations">Private locations</PageTitle>
      <p class="muted">Agents count as connected while they have called the service within the last 90 seconds.</p>
      <ErrorNote error={locations.error} what="the private locations" />
      {!locations.data && !locations.error ? <Loading what="private locations" /> : null}
      {locations.data && locations.data.length === 0 ? (
        <p class="empty">
          No private locations yet: <code>POST /v1/private-locations</code>, then a key for its agents.
        </p>
      ) : null}
      <div class="cards">
        {(locations.data ?? []).map((location) => {
          const versions = [...new Set(location.runningAgents.map((agent) => agent.version))].sort();
          return (
            <section key={location.id} class="card" aria-labelledby={`location-${location.id}`} data-location={location.slugName}>
              <div class="title-row">
                <h2 id={`location-${location.id}`}>
                  {location.name} <span class="muted small">{location.slugName}</span>
                </h2>
                <Badge
                  outcome={location.agentCount > 0 ? 'passing' : 'failing'}
                  label={location.agentCount > 0 ? `${location.agentCount} agent${location.agentCount > 1 ? 's' : ''} connected` : 'No agent connected'}
                />
              </div>
              <dl class="facts">
                <div class="field">
                  <dt>Last seen</dt>
                  <dd>
                    <TimeAgo iso={location.lastSeen} />
                  </dd>
                </div>
                <div class="field">
                  <dt>Queue depth</dt>
                  <dd>{location.queuedJobs ?? '–'} waiting</dd>
                </div>
                <div class="field">
                  <dt>Running</dt>
                  <dd>{location.runningJobs ?? '–'} jobs</dd>
                </div>
                <div class="field">
                  <dt>Versions</dt>
                  <dd>{versions.join(', ') || '–'}</dd>
                </div>
                <div class="field">
                  <dt>Keys</dt>
                  <dd>{location.keys.map((key) => key.maskedKey.replace(/\*{3,}/g, '…')).join(', ') || 'none'}</dd>
                </div>
              </dl>
              {location.runningAgents.length > 0 ? (
                <div class="table-wrap">
                  <table class="responsive">
                    <caption class="visually-hidden">Agents connected to {location.name}</caption>
                    <thead>
                      <tr>
                        <th scope="col">Host</th>
                        <th scope="col">Version</th>
                        <th scope="col">Mode</th>
                        <th scope="col">Last seen</th>
                      </tr>
                    </thead>
                    <tbody>
                      {location.runningAgents.map((agent) => (
                        <tr key={agent.agentId}>
                          <td data-label="Host" title={`Agent ${agent.agentId}`}>
                            {agent.hostname}
                          </td>
                          <td data-label="Version">{agent.version}</td>
                          <td data-label="Mode">{agent.mode}</td>
                          <td data-label="Last seen" title={absolute(agent.lastSeen)}>
                            <TimeAgo iso={agent.lastSeen} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              ) : null}
            </section>
          );
        })}
      </div>
    </>
  );
}
