/**
 * Node.js's permission model, in the flavour the runtime's Node speaks:
 * `--permission` from 22.13 (and 23.5), `--experimental-permission` from 20.0,
 * nothing before. Playwright's runner forks its workers with the same flags,
 * so the script itself runs under them.
 */
export interface PermissionGrants {
  read: string[];
  write: string[];
}

export function permissionFlags(nodeVersion: string, grants: PermissionGrants): string[] {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  const stable = major > 23 || (major === 23 && minor >= 5) || (major === 22 && minor >= 13);
  const experimental = major >= 20;
  if (!stable && !experimental) return [];
  return [
    stable ? '--permission' : '--experimental-permission',
    ...grants.read.map((path) => `--allow-fs-read=${path}`),
    ...grants.write.map((path) => `--allow-fs-write=${path}`),
    // The test runner forks workers and loads its ESM hooks in a worker thread.
    '--allow-child-process',
    '--allow-worker',
  ];
}

/** Whether `--disable-warning` exists (21.3+): the permission model warns on every start otherwise. */
export function quietWarningFlags(nodeVersion: string): string[] {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  return major > 21 || (major === 21 && minor >= 3) ? ['--disable-warning=SecurityWarning', '--disable-warning=ExperimentalWarning'] : [];
}
