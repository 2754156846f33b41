/**
 * A typed client of the jupyter-gpu-env REST API (`{baseUrl}gpu-env/api/`).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import {
  ExportFormat,
  IApiErrorBody,
  IDeletedEnvironment,
  IEnvironment,
  IEnvironmentDetail,
  IEnvironmentList,
  IExportResult,
  IGpuSnapshot,
  IImage,
  IImageList,
  IImageRequest,
  IKernelInfo,
  ITask,
  ITaskList
} from './types';

/** The API's root, relative to the server's base URL. */
export const API_NAMESPACE = 'gpu-env/api';

/**
 * An error answered by the API (or a network failure, with status 0).
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
    readonly details: Record<string, unknown>[] | null = null
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function isErrorBody(value: unknown): value is IApiErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as IApiErrorBody).message === 'string'
  );
}

/**
 * Call `path` under the API root and parse its JSON answer.
 *
 * Rejects with an {@link ApiError} whatever went wrong: network failure
 * (status 0, reason `network`), an error status, or a body that is not JSON.
 */
export async function requestApi<T>(
  path: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, API_NAMESPACE, path);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ApiError(`Cannot reach the server: ${message}`, 0, 'network');
  }

  const text = await response.text();
  let body: unknown = null;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      if (response.ok) {
        throw new ApiError(
          `The server answered ${url} with something that is not JSON.`,
          response.status,
          'invalid_response'
        );
      }
    }
  }

  if (!response.ok) {
    if (isErrorBody(body)) {
      throw new ApiError(
        body.message,
        response.status,
        body.reason ?? 'error',
        body.details ?? null
      );
    }
    const fallback = response.statusText || `HTTP ${response.status}`;
    throw new ApiError(fallback, response.status, 'http_error');
  }
  return body as T;
}

/**
 * The API calls the sidebar makes.
 */
export class GpuEnvClient {
  constructor(
    readonly serverSettings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  /** The latest GPU and host-memory sample. */
  getGpu(): Promise<IGpuSnapshot> {
    return requestApi<IGpuSnapshot>(
      'gpu',
      { method: 'GET' },
      this.serverSettings
    );
  }

  // -- environments and kernels

  async listEnvironments(): Promise<IEnvironment[]> {
    const list = await this._get<IEnvironmentList>('environments');
    return list.environments;
  }

  /** One environment with its packages. */
  getEnvironment(name: string): Promise<IEnvironmentDetail> {
    return this._get(`environments/${enc(name)}`);
  }

  /** Start a clone of `source` as `name`: answers the task (202). */
  cloneEnvironment(source: string, name: string): Promise<ITask> {
    return this._send('POST', 'environments', { source, name });
  }

  /** Delete one of the user's environments; 409 `kernels_running` names kernels in the way. */
  deleteEnvironment(
    name: string,
    shutdownKernels = false
  ): Promise<IDeletedEnvironment> {
    const query = shutdownKernels ? '?shutdown_kernels=true' : '';
    return this._send('DELETE', `environments/${enc(name)}${query}`);
  }

  /** Start adding or removing packages: answers the task (202). */
  changePackages(
    name: string,
    add: string[],
    remove: string[]
  ): Promise<ITask> {
    return this._send('POST', `environments/${enc(name)}/packages`, {
      add,
      remove
    });
  }

  registerKernel(name: string, displayName?: string): Promise<IKernelInfo> {
    const body = displayName ? { display_name: displayName } : {};
    return this._send('POST', `environments/${enc(name)}/kernel`, body);
  }

  unregisterKernel(name: string): Promise<{ kernel_name: string }> {
    return this._send('DELETE', `environments/${enc(name)}/kernel`);
  }

  exportEnvironment(
    name: string,
    format: ExportFormat
  ): Promise<IExportResult> {
    return this._get(`environments/${enc(name)}/export?format=${format}`);
  }

  /**
   * Pack an environment: the task that builds the image (202), or the
   * existing image of identical content at once (200).
   */
  packEnvironment(
    name: string,
    request: IImageRequest
  ): Promise<ITask | IImage> {
    return this._send('POST', `environments/${enc(name)}/image`, request);
  }

  // -- images

  async listImages(): Promise<IImage[]> {
    const list = await this._get<IImageList>('images');
    return list.images;
  }

  /** Delete an image, its kernel and its mount; 409 `kernels_running` names kernels in the way. */
  deleteImage(id: string, shutdownKernels = false): Promise<IImage> {
    const query = shutdownKernels ? '?shutdown_kernels=true' : '';
    return this._send('DELETE', `images/${enc(id)}${query}`);
  }

  /** Where the browser downloads an image file (cookie-authenticated). */
  imageDownloadUrl(id: string): string {
    const url = URLExt.join(
      this.serverSettings.baseUrl,
      API_NAMESPACE,
      'images',
      enc(id),
      'download'
    );
    const xsrf = document.cookie.match('\\b_xsrf=([^;]*)\\b');
    return xsrf ? `${url}?_xsrf=${xsrf[1]}` : url;
  }

  // -- tasks

  async listTasks(): Promise<ITask[]> {
    const list = await this._get<ITaskList>('tasks');
    return list.tasks;
  }

  getTask(id: string): Promise<ITask> {
    return this._get(`tasks/${enc(id)}`);
  }

  /** Cancel a task; 409 when it has already finished. */
  cancelTask(id: string): Promise<ITask> {
    return this._send('DELETE', `tasks/${enc(id)}`);
  }

  private _get<T>(path: string): Promise<T> {
    return requestApi<T>(path, { method: 'GET' }, this.serverSettings);
  }

  private _send<T>(
    method: 'POST' | 'DELETE',
    path: string,
    body?: object
  ): Promise<T> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'Content-Type': 'application/json' };
    }
    return requestApi<T>(path, init, this.serverSettings);
  }
}

/** Whether a pack answer is the task building the image (else the image). */
export function isTask(value: ITask | IImage): value is ITask {
  return 'state' in value && 'progress' in value;
}

function enc(part: string): string {
  return encodeURIComponent(part);
}
