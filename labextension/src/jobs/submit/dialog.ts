/**
 * "Send to batch": save the notebook, ask how to run it, submit.
 *
 * The dialog stays open when the server refuses the request (400, 409), with
 * the server's message and everything typed kept; it closes once the job is
 * recorded.
 */
import { Notification } from '@jupyterlab/apputils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { KernelSpec, ServerConnection } from '@jupyterlab/services';

import type {
  IBackendInfo,
  IEnvironment,
  IImage,
  IJob,
  IJobRequest,
  INotebookParameters,
  IPipeline,
  ISchedule,
  ISweep
} from '../../api/types';
import { messageOf } from '../../api/request';
import { SendingDialog } from '../../components/dialogs/sending';
import { EnvironmentsClient } from '../../environments/client';
import { notifyError } from '../../environments/notify';
import { ImagesClient } from '../../images/client';
import { JobsClient } from '../client';
import { JobsModel } from '../model';
import { ILastUsed } from './resource-fields';
import { ISubmitContext, SubmitForm } from './form';
import { IKernelChoice } from './target-select';
import { describeRuns } from '../sweeps/values';
import { ISendPart } from '../tokens';

/**
 * What the dialog made: a job or a sweep (`POST jobs`), a schedule, or a
 * pipeline ("Run after…").
 */
export type Submitted = IJob | ISweep | ISchedule | IPipeline;

/** Whether the answer of `POST jobs` is a sweep. */
export function isSweep(item: Submitted): item is ISweep {
  return 'size' in item && 'counts' in item;
}

/** A dialog whose Submit sends the request and closes only on success. */
export class SubmitDialog extends SendingDialog<IJobRequest, Submitted> {
  constructor(
    form: SubmitForm,
    send: (request: IJobRequest) => Promise<Submitted>,
    title: string
  ) {
    super({
      title,
      body: form,
      accept: 'Submit',
      send,
      focusNodeSelector: '.jp-GpuEnv-params input'
    });
    this.addClass('jp-GpuEnv-submitDialog');
  }

  /** The job (or the sweep, schedule or pipeline), once the server recorded it. */
  get job(): Submitted | null {
    return this.result;
  }

  /** The request that made it. */
  get request(): IJobRequest | null {
    return this.sent;
  }
}

export interface ISubmitOptions {
  client: JobsClient;
  kernelspecs: KernelSpec.IManager;
  model: JobsModel;
  /** The dialog's remembered choices. */
  last: () => Promise<ILastUsed | null>;
  /** Called with what to remember after a successful submission. */
  remember: (last: ILastUsed) => void;
  /** Show the job (or the sweep) in the Jobs section. */
  openJobs: (job: Submitted) => void;
  /** Open the results of a sweep. */
  openResults: (sweep: ISweep) => void;
  /** The parts other features add ("Repeat", "Run after…"), made per dialog. */
  parts?: readonly ((context: ISendPart.IContext) => ISendPart)[];
}

/** Save `panel`, ask how to run it, and submit it; the job, sweep or null. */
export async function submitNotebook(
  panel: NotebookPanel,
  options: ISubmitOptions
): Promise<Submitted | null> {
  const { context } = panel;
  await context.ready;
  try {
    await context.save();
  } catch (error) {
    Notification.error(
      `Could not save ${context.path} before sending it: ${messageOf(error)}`
    );
    return null;
  }
  const model = context.model;
  const spec = model.getMetadata('kernelspec') as { name?: unknown } | null;
  const kernel = typeof spec?.name === 'string' ? spec.name : null;
  // The server reads the parameters cell of the notebook as saved.
  const [choices, last] = await Promise.all([
    sendChoices(
      options.client,
      options.kernelspecs,
      options.client.notebookParameters(context.path),
      'Cannot send to batch'
    ),
    options.last().catch(() => null)
  ]);
  if (!choices) {
    return null;
  }
  const parts = (options.parts ?? []).map(make =>
    make({ path: context.path, jobs: options.model.jobs ?? [] })
  );
  const form = new SubmitForm({
    parts,
    path: context.path,
    kernel,
    ...choices,
    last,
    capacity: name => options.client.capacity(name),
    advice: (backend, signal) =>
      options.client.advice({ backend, notebook_path: context.path }, signal)
  });
  // The part that sent what the server made (none: `POST jobs`).
  let by: ISendPart | null = null;
  const title = `Send “${context.path.split('/').pop()}” to batch`;
  const dialog = new SubmitDialog(
    form,
    async request => {
      const active = parts.filter(part => part.active());
      if (active.length > 1) {
        const labels = active.map(part => `“${part.label}”`).join(' or ');
        throw new Error(`Choose ${labels}, not both.`);
      }
      by = active[0] ?? null;
      return by
        ? ((await by.send(request)) as Submitted)
        : options.client.submit(request);
    },
    title
  );
  for (const part of parts) {
    part.onAcceptLabel = wanted => {
      const text = wanted ?? 'Submit';
      const button = dialog.node.querySelector<HTMLElement>(
        '.jp-Dialog-button.jp-mod-accept'
      );
      const label = button?.querySelector<HTMLElement>(
        '.jp-Dialog-buttonLabel'
      );
      button?.setAttribute('aria-label', text);
      if (label) {
        label.textContent = text;
        label.title = text;
      }
    };
  }
  const result = await dialog.launch();
  const { job, request } = dialog;
  if (!result.button.accept || !job || !request) {
    return null;
  }
  options.remember({
    backend: request.backend,
    queue: request.queue ?? undefined,
    resources: request.resources
  });
  const part = by as ISendPart | null;
  if (part) {
    part.sent(job, () => options.openJobs(job));
    return job;
  }
  const open: Notification.IAction = {
    label: 'Open jobs',
    caption: 'Show the job in the GPU Env sidebar',
    callback: () => options.openJobs(job)
  };
  if (isSweep(job)) {
    options.model.addSweep(job);
    const runs = describeRuns(job.size, job.max_concurrent);
    Notification.success(
      `Sent the sweep '${job.name}' (${runs}) to ${job.backend}.`,
      {
        autoClose: 6000,
        actions: [
          { ...open, caption: 'Show the sweep in the GPU Env sidebar' },
          {
            label: 'Open results',
            caption: 'The runs side by side, filled in as they end',
            callback: () => options.openResults(job),
            displayType: 'link'
          }
        ]
      }
    );
    return job;
  }
  const single = job as IJob;
  options.model.add(single);
  Notification.success(`Sent '${single.name}' to ${single.backend}.`, {
    autoClose: 6000,
    actions: [open]
  });
  return job;
}

/** What the send dialog offers, with the notebook's parameters as read. */
export type SendChoices = Omit<ISubmitContext, 'path' | 'kernel' | 'last'>;

/**
 * What the send dialog offers (backends, kernels, environments, images) and
 * the `parameters` the server read; null, said in a notification that
 * starts with `failure`, when there is no backend to send to.
 */
export async function sendChoices(
  client: JobsClient,
  kernelspecs: KernelSpec.IManager,
  parameters: Promise<INotebookParameters>,
  failure: string
): Promise<SendChoices | null> {
  const environments = new EnvironmentsClient(client.serverSettings);
  const images = new ImagesClient(client.serverSettings);
  const [backends, read, kernels, envs, imageList] = await Promise.all([
    client.backends().catch((error: unknown) => error),
    parameters.catch((error: unknown) => error),
    kernelChoices(kernelspecs),
    environments.list().catch(() => null),
    images.list().catch(() => null)
  ]);
  if (!Array.isArray(backends) || backends.length === 0) {
    const why = Array.isArray(backends)
      ? 'the server has no batch backend configured'
      : messageOf(backends);
    Notification.error(`${failure}: ${why}.`);
    return null;
  }
  const ok = read instanceof Error ? null : (read as INotebookParameters);
  return {
    parameters: ok,
    parametersError: ok ? undefined : messageOf(read),
    kernels,
    environments: envs,
    images: imageList,
    backends
  };
}

/** What a dialog that starts something on a backend offers, read at once. */
export interface IRunChoices {
  backends: IBackendInfo[];
  kernels: IKernelChoice[];
  environments: IEnvironment[] | null;
  images: IImage[] | null;
  last: ILastUsed | null;
}

/**
 * The backends, kernels, environments, images and the choices last made,
 * for a dialog that starts something on a backend (a Dask cluster, a batch
 * kernel); null, said in an error notification titled `failure`, when
 * there is no backend to start it on.
 */
export async function runChoices(
  client: {
    serverSettings: ServerConnection.ISettings;
    backends(): Promise<IBackendInfo[]>;
  },
  kernelspecs: KernelSpec.IManager,
  lastUsed: () => Promise<ILastUsed | null>,
  failure: string
): Promise<IRunChoices | null> {
  const environments = new EnvironmentsClient(client.serverSettings);
  const images = new ImagesClient(client.serverSettings);
  const [backends, kernels, envs, imageList, last] = await Promise.all([
    client.backends().catch((error: unknown) => error),
    kernelChoices(kernelspecs),
    environments.list().catch(() => null),
    images.list().catch(() => null),
    lastUsed().catch(() => null)
  ]);
  if (!Array.isArray(backends) || backends.length === 0) {
    notifyError(
      failure,
      Array.isArray(backends)
        ? new Error('the server has no batch backend configured')
        : backends
    );
    return null;
  }
  return { backends, kernels, environments: envs, images: imageList, last };
}

export async function kernelChoices(
  manager: KernelSpec.IManager
): Promise<IKernelChoice[]> {
  try {
    await manager.ready;
  } catch {
    return [];
  }
  const specs = manager.specs?.kernelspecs ?? {};
  return Object.entries(specs)
    .map(([name, spec]) => ({ name, displayName: spec?.display_name ?? name }))
    .sort((a, b) => a.displayName.localeCompare(b.displayName));
}
