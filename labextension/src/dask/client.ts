/**
 * The Dask calls of the REST API: start, list, follow, scale and shut down
 * clusters whose scheduler and workers run on a batch backend.
 */
import { ApiClient, enc } from '../api/request';
import type {
  IBackendInfo,
  IBackendList,
  IDaskCluster,
  IDaskClusterList,
  IDaskClusterRequest,
  IDaskScaleRequest
} from '../api/types';

export class DaskClient extends ApiClient {
  /** Clusters, newest first (one page: the section shows the first 100). */
  list(limit = 100): Promise<IDaskClusterList> {
    return this.request('GET', 'dask/clusters', { query: { limit } });
  }

  get(id: string): Promise<IDaskCluster> {
    return this.request('GET', `dask/clusters/${enc(id)}`);
  }

  /**
   * Start a cluster: 201 with it, `starting`; 409 `dask_not_installed` when
   * its environment lacks `distributed` (the details say what to add).
   */
  create(request: IDaskClusterRequest): Promise<IDaskCluster> {
    return this.request('POST', 'dask/clusters', { body: request });
  }

  /** Ask for a number of workers, or adaptive bounds. */
  scale(id: string, request: IDaskScaleRequest): Promise<IDaskCluster> {
    return this.request('POST', `dask/clusters/${enc(id)}/scale`, {
      body: request
    });
  }

  /** Shut the cluster down: it answers `stopping` (or `stopped`). */
  stop(id: string): Promise<IDaskCluster> {
    return this.request('POST', `dask/clusters/${enc(id)}/cancel`);
  }

  /** The backends a cluster can run on. */
  async backends(): Promise<IBackendInfo[]> {
    return (await this.request<IBackendList>('GET', 'backends')).backends;
  }
}
