/**
 * The pipeline calls of the REST API: list, one, submit (a request or a
 * `*.pipeline.yaml` file), cancel, and run again from a node.
 */
import { ApiClient, enc } from '../api/request';
import type { IPipeline, IPipelineList, IPipelineRequest } from '../api/types';

export class PipelinesClient extends ApiClient {
  /** Pipelines, newest first. */
  list(
    options: { limit?: number; offset?: number } = {}
  ): Promise<IPipelineList> {
    return this.request('GET', 'pipelines', {
      query: { limit: options.limit, offset: options.offset }
    });
  }

  get(id: string): Promise<IPipeline> {
    return this.request('GET', `pipelines/${enc(id)}`);
  }

  /** Run notebooks as a pipeline: checked whole first (400, 404, 409). */
  submit(request: IPipelineRequest): Promise<IPipeline> {
    return this.request('POST', 'pipelines', { body: request });
  }

  /** Run a `*.pipeline.yaml` under the server's root (400 names the line). */
  submitFile(path: string): Promise<IPipeline> {
    return this.request('POST', 'pipelines/file', { body: { path } });
  }

  /** Stop its running nodes and skip the rest; 409 once all have ended. */
  cancel(id: string): Promise<IPipeline> {
    return this.request('POST', `pipelines/${enc(id)}/cancel`);
  }

  /** Run `node` and everything below it again; 409 while one is active. */
  rerun(id: string, node: string): Promise<IPipeline> {
    return this.request('POST', `pipelines/${enc(id)}/rerun`, {
      body: { from: node }
    });
  }
}
