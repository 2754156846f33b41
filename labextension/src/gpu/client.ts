/**
 * The GPU panel's calls beyond `GET gpu`: the history and the release.
 */
import { ServerConnection } from '@jupyterlab/services';

import { requestApi } from '../api';
import { IGpuHistory, IReleaseResult } from './types';

/** Anything holding the server settings (a GpuEnvClient does). */
export interface IServerSettingsHolder {
  readonly serverSettings: ServerConnection.ISettings;
}

/** Past samples, oldest first; only the last `seconds` when given. */
export function getGpuHistory(
  client: IServerSettingsHolder,
  seconds?: number
): Promise<IGpuHistory> {
  const query = seconds !== undefined ? `?seconds=${seconds}` : '';
  return requestApi<IGpuHistory>(
    `gpu/history${query}`,
    { method: 'GET' },
    client.serverSettings
  );
}

/** Shut down this server's kernels that hold GPU memory. */
export function releaseGpu(
  client: IServerSettingsHolder
): Promise<IReleaseResult> {
  return requestApi<IReleaseResult>(
    'gpu/release',
    {
      method: 'POST',
      body: JSON.stringify({}),
      headers: { 'Content-Type': 'application/json' }
    },
    client.serverSettings
  );
}
