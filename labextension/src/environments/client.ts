/**
 * The environment calls of the REST API: list, read, clone, create from a
 * file, delete, change packages, register or remove the kernel, export,
 * pack, and share with the team (publish, unpublish).
 */
import { ApiClient, enc } from '../api/request';
import type {
  ExportFormat,
  IDeletedEnvironment,
  IEnvironment,
  IEnvironmentDetail,
  IEnvironmentHistory,
  IEnvironmentList,
  ICloneRequest,
  ICreateRequest,
  IExportResult,
  IImage,
  IImageRequest,
  IKernelInfo,
  IKernelRemoved,
  IPackageSearch,
  IPackagesRequest,
  IPublishRequest,
  PackageKind,
  ITask
} from '../api/types';

export class EnvironmentsClient extends ApiClient {
  async list(): Promise<IEnvironment[]> {
    return (await this.listAll()).environments;
  }

  /** The environments, and whether this server can share with the team. */
  listAll(): Promise<IEnvironmentList> {
    return this.request('GET', 'environments');
  }

  /** One environment with its packages. */
  get(name: string): Promise<IEnvironmentDetail> {
    return this.request('GET', `environments/${enc(name)}`);
  }

  /** Start a clone of `source` as `name`: answers the task (202). */
  clone(source: string, name: string): Promise<ITask> {
    const body: ICloneRequest = { source, name };
    return this.request('POST', 'environments', { body });
  }

  /**
   * Start making `name` from a file under the server's root (202): a
   * `create` task, or with `dry_run` a `plan` task whose result is an
   * IPackagesPlan. 400 names what is wrong in the file, and where.
   */
  create(body: ICreateRequest): Promise<ITask> {
    return this.request('POST', 'environments', { body });
  }

  /** Start publishing one of the user's environments (202, a `publish` task). */
  publish(name: string, body: IPublishRequest): Promise<ITask> {
    return this.request('POST', `environments/${enc(name)}/publish`, {
      body
    });
  }

  /** Remove a shared environment this user published (403 for another's). */
  unpublish(name: string): Promise<IDeletedEnvironment> {
    return this.request('DELETE', `environments/${enc(name)}`);
  }

  /** Delete one of the user's environments; 409 `kernels_running` names kernels in the way. */
  remove(name: string, shutdownKernels = false): Promise<IDeletedEnvironment> {
    return this.request('DELETE', `environments/${enc(name)}`, {
      query: { shutdown_kernels: shutdownKernels || undefined }
    });
  }

  /**
   * Start a package change, or with `dry_run` its plan: answers the task
   * (202), whose result is an IPackagesResult or an IPackagesPlan.
   */
  changePackages(name: string, body: IPackagesRequest): Promise<ITask> {
    return this.request('POST', `environments/${enc(name)}/packages`, {
      body
    });
  }

  /** Packages that exist: conda by part of the name, PyPI by exact name. */
  search(query: string, kind: PackageKind): Promise<IPackageSearch> {
    return this.request('GET', 'packages', { query: { q: query, kind } });
  }

  /** The changes an environment holds, newest first, and what undo would do. */
  history(name: string): Promise<IEnvironmentHistory> {
    return this.request('GET', `environments/${enc(name)}/history`);
  }

  /** Start swapping the state kept before the last change back in (202). */
  undo(name: string): Promise<ITask> {
    return this.request('POST', `environments/${enc(name)}/undo`);
  }

  registerKernel(name: string, displayName?: string): Promise<IKernelInfo> {
    const body = displayName ? { display_name: displayName } : {};
    return this.request('POST', `environments/${enc(name)}/kernel`, { body });
  }

  unregisterKernel(name: string): Promise<IKernelRemoved> {
    return this.request('DELETE', `environments/${enc(name)}/kernel`);
  }

  export(name: string, format: ExportFormat): Promise<IExportResult> {
    return this.request('GET', `environments/${enc(name)}/export`, {
      query: { format }
    });
  }

  /**
   * Pack an environment: the task that builds the image (202), or the
   * existing image of identical content at once (200).
   */
  pack(name: string, request: IImageRequest): Promise<ITask | IImage> {
    return this.request('POST', `environments/${enc(name)}/image`, {
      body: request
    });
  }
}

/** Whether a pack answer is the task building the image (else the image). */
export function isTask(value: ITask | IImage): value is ITask {
  return 'state' in value && 'progress' in value;
}
