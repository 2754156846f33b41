/**
 * A typed client of the jupyter-gpu-env REST API (`{baseUrl}gpu-env/api/`).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IApiErrorBody, IGpuSnapshot } from './types';

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
}
