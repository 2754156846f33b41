/**
 * The REST API's types, by the names the code uses: aliases of the
 * component schemas that openapi-typescript generates from
 * docs/openapi.json into ./schema.d.ts (`jlpm build:api-types`; checked by
 * `jlpm check:api-types`). Edit the server's models, not these.
 */
import type { components } from './schema';

type Schemas = components['schemas'];

/**
 * An answer as the server sends it: every field present, nested ones too
 * (the server dumps its models whole; the schema leaves fields with a
 * computed default optional).
 */
type Answer<T> = T extends (infer U)[]
  ? Answer<U>[]
  : T extends object
    ? { [K in keyof T]-?: Answer<Exclude<T[K], undefined>> }
    : T;

/** The answer of a component schema. */
type S<N extends keyof Schemas> = Answer<Schemas[N]>;

/**
 * A request body: the fields the schema requires, and the others optional
 * (the generator makes fields with a default required, as answers have them).
 */
type RequestOf<T, K extends keyof T> = Pick<T, K> & Partial<Omit<T, K>>;

/** The body of every error response. */
export type IApiErrorBody = S<'ApiError'>;

// -- GPU and host (GET gpu, gpu/history, gpu/release)

export type IGpuSnapshot = S<'GpuSnapshot'>;
export type IHostResources = S<'HostResources'>;
export type IMemoryUsage = S<'MemoryUsage'>;
export type ICpuUsage = S<'CpuUsage'>;
/** Where host numbers come from: cgroup v2, cgroup v1 or the whole machine. */
export type MemorySource = IHostResources['source'];
export type IGpuDevice = S<'GpuDevice'>;
export type IMigDevice = S<'MigDevice'>;
export type IGpuProcess = S<'GpuProcess'>;
export type IGpuStatus = S<'GpuStatus'>;
/** Why GPUs are (or are not) visible to the server. */
export type GpuReason = IGpuStatus['reason'];
export type IKernelUsage = S<'KernelUsage'>;
export type IIdleState = S<'IdleState'>;
export type IGpuHistory = S<'GpuHistory'>;
export type IHistoryPoint = S<'HistoryPoint'>;
export type IDeviceMemoryPoint = S<'DeviceMemoryPoint'>;
export type IReleaseResult = S<'ReleaseResult'>;

// -- environments, kernels, images and tasks

export type IEnvironment = S<'Environment'>;
/**
 * `managed`: provided by the platform, read-only; `own`: the user's;
 * `shared`: published by a teammate (or the user), read-only, cloneable.
 */
export type EnvKind = IEnvironment['kind'];
export type IEnvironmentDetail = S<'EnvironmentDetail'>;
/** `GET environments`: the list, and whether the server can share. */
export type IEnvironmentList = S<'EnvironmentList'>;

/** Every field of `POST environments` (the schema's first alternative). */
type NewEnvironmentFields = Extract<
  Schemas['NewEnvironmentRequest'],
  { name: string }
>;
/** `POST environments` with `source`: a clone of a listed environment. */
export type ICloneRequest = Pick<NewEnvironmentFields, 'name'> & {
  source: NonNullable<NewEnvironmentFields['source']>;
};
/**
 * `POST environments` with `from_file` (a path under the server's root, as
 * the file browser shows it); with `dry_run`, only its plan.
 */
export type ICreateRequest = Pick<NewEnvironmentFields, 'name'> & {
  from_file: NonNullable<NewEnvironmentFields['from_file']>;
  dry_run?: boolean;
};
/** `POST environments`: a clone, or an environment made from a file. */
export type INewEnvironmentRequest = ICloneRequest | ICreateRequest;
/** What creating from a file did: the result of a `create` task. */
export type ICreateResult = S<'CreateResult'>;
export type ICreateReport = S<'CreateReport'>;
/** `POST environments/{name}/publish`: the shared name is optional. */
export type IPublishRequest = RequestOf<
  Schemas['PublishRequest'],
  'description'
>;
/** The shared environment: the result of a `publish` task. */
export type IPublishResult = S<'PublishResult'>;
export type IPackage = S<'Package'>;
export type IKernelInfo = S<'KernelInfo'>;
export type IKernelRemoved = S<'KernelRemoved'>;
export type IDeletedEnvironment = S<'DeletedEnvironment'>;
export type ExportFormat = S<'ExportFormat'>;
export type IExportResult = S<'ExportResult'>;
export type IImageRequest = RequestOf<Schemas['ImageRequest'], never>;
export type ImageFormat = S<'ImageRequest'>['format'];
export type Compression = S<'ImageRequest'>['compression'];
export type IImage = S<'Image'>;
export type IImageUsage = S<'ImageUsage'>;
export type IImageList = S<'ImageList'>;
export type ITask = S<'Task'>;
export type TaskState = ITask['state'];
export type ITaskList = S<'TaskList'>;

/** What a package change did: the result of an `install` task. */
export type IPackagesResult = S<'PackagesResult'>;
/** What a package change would do: the result of a `plan` task (`dry_run`). */
export type IPackagesPlan = S<'PackagesPlan'>;
export type IPlannedChange = S<'PlannedChange'>;
export type PlanAction = IPlannedChange['action'];
export type IPackageSearch = S<'PackageSearch'>;
export type PackageKind = IPackage['kind'];
export type IEnvironmentHistory = S<'EnvironmentHistory'>;
export type IHistoryEntry = S<'HistoryEntry'>;
/** What an undo restored: the result of an `undo` task. */
export type IUndoResult = S<'UndoResult'>;
/** `POST environments/{name}/packages`: the lists given, the others empty. */
export type IPackagesRequest = RequestOf<Schemas['PackagesRequest'], never>;

// -- batch jobs

export type IJob = S<'Job'>;
export type JobState = IJob['state'];
export type IJobList = S<'JobList'>;
export type IJobResources = S<'JobResources'>;
export type IJobProgress = S<'JobProgress'>;
/** Resources as a submission asks for them, in the forms people write. */
export type IResourceRequest = RequestOf<Schemas['Resources'], never>;
/** `POST jobs`. At most one of kernel, environment and image. */
export type IJobRequest = Omit<
  RequestOf<Schemas['JobRequest'], 'notebook_path'>,
  'resources'
> & { resources?: IResourceRequest };
export type ILogChunk = S<'LogChunk'>;
export type IBackendInfo = S<'BackendInfo'>;
export type IBackendList = S<'BackendList'>;
export type IResourceLimits = S<'ResourceLimits'>;
export type IBackendUsage = S<'BackendUsage'>;
export type IUsageReport = S<'UsageReport'>;
/** A sweep: one notebook run once per set of parameter values. */
export type ISweep = S<'JobGroup'>;
export type SweepState = ISweep['state'];
/** `GET sweeps/{id}/results`: the runs side by side. */
export type ISweepResults = S<'SweepResults'>;
export type ISweepRow = S<'SweepRow'>;
/**
 * `POST jobs/{id}/rerun`: what to change (parameters over the job's own;
 * backend, queue, resources whole, runtime); the snapshot stays.
 */
export type IRerunRequest = Omit<
  RequestOf<Schemas['RerunRequest'], never>,
  'resources'
> & { resources?: IResourceRequest | null };

/** `GET notebooks/parameters`: the `parameters` cell as the server reads it. */
export type INotebookParameters = S<'NotebookParameters'>;
export type INotebookParameter = S<'NotebookParameter'>;
/** How a parameter is edited: typed inputs, or any JSON value as text. */
export type ParamKind = INotebookParameter['kind'];
/** `GET sweeps`: sweeps, newest first. */
export type ISweepList = S<'JobGroupList'>;
/** How a job used its GPUs, from the runner's samples. */
export type IJobGpuUsage = S<'JobGpuUsage'>;
export type IJobGpuDevice = S<'JobGpuDevice'>;
/** How a job's GPU energy was found: a counter, power samples, a MIG slice's share. */
export type EnergySource = NonNullable<IJobGpuUsage['energy_source']>;
/** What GPU time and energy cost at the site's prices. */
export type ICost = S<'Cost'>;
/** `GET jobs/{id}/gpu`: the samples for a chart, and the summary. */
export type IJobGpuSeries = S<'JobGpuSeries'>;
/** `GET jobs/usage/weeks`: GPU-hours allocated and used per week. */
export type IUsageWeeks = S<'UsageWeeks'>;
export type IUsageWeek = S<'UsageWeek'>;
/** `GET backends/{name}/capacity`: what could start now. */
export type IClusterCapacity = S<'ClusterCapacity'>;
export type ICapacityRow = S<'CapacityRow'>;
/** `normal` (the default) or `opportunistic` (may be stopped, then resumes). */
export type JobPriority = IJob['priority'];
/** A priority a backend offers, with what it means there in words. */
export type IPriorityOffer = S<'PriorityOffer'>;
/** An earlier attempt of a job that was stopped and requeued. */
export type IJobAttempt = S<'JobAttempt'>;
/** `GET jobs/advice`: the smallest GPU or MIG slice that fits, and why. */
export type IGpuAdvice = S<'GpuAdvice'>;
export type ISuggestedResources = S<'SuggestedResources'>;
/** Where the suggestion could run, likely soonest first. */
export type IStartOption = S<'StartOption'>;

// -- Notifications (GET/PUT notifications, POST notifications/test)

/** `GET notifications`: the user's choices, and whether e-mail is on here. */
export type INotificationSettings = S<'NotificationSettingsView'>;
/** `PUT notifications`: the whole choice (a field left out: its default). */
export type INotificationChoice = RequestOf<
  Schemas['NotificationSettings'],
  never
>;
/** `POST notifications/test`: what happened to each destination. */
export type INotificationTest = S<'NotificationTest'>;
export type IDelivery = S<'Delivery'>;

// -- schedules

/** A notebook's snapshot run on a schedule (a cron line or an ISO interval). */
export type ISchedule = S<'Schedule'>;
export type IScheduleList = S<'ScheduleList'>;
/** One due time: Unix, UTC and in the schedule's zone. */
export type IDueTime = S<'DueTime'>;
/** One due time of a schedule and what became of it. */
export type IScheduleRun = S<'ScheduleRun'>;
export type ScheduleOutcome = IScheduleRun['outcome'];
/** Who starts the runs (this server, or the batch system), and how it stands. */
export type IKeeper = S<'Keeper'>;
export type Overlap = ISchedule['overlap'];
/** `GET schedules/preview`: an expression in words with its next runs. */
export type ISchedulePreview = S<'SchedulePreview'>;
/** When to run, in `POST schedules` besides what `POST jobs` takes. */
export interface IScheduleTiming {
  schedule: string;
  timezone?: string;
  overlap?: Overlap;
  active?: boolean;
}
/** `POST schedules`: one run's request, and when to run it. */
export type IScheduleRequest = IJobRequest & IScheduleTiming;
/** `PATCH schedules/{id}`: what to change. */
export type ISchedulePatch = Omit<
  RequestOf<Schemas['SchedulePatch'], never>,
  'resources'
> & { resources?: IResourceRequest | null };

// -- pipelines

/** A pipeline run: its nodes in graph order, and how they stand. */
export type IPipeline = S<'Pipeline'>;
export type PipelineState = IPipeline['state'];
/** One node of a pipeline: a job, a sweep, or an earlier job it waits for. */
export type IPipelineNode = S<'PipelineNode'>;
export type PipelineNodeState = IPipelineNode['state'];
export type PipelineNodeKind = IPipelineNode['kind'];
/** `GET pipelines`: newest first. */
export type IPipelineList = S<'PipelineList'>;
/** One node of `POST pipelines`: what `POST jobs` takes, its parents, `when`. */
export type IPipelineNodeRequest = Omit<
  RequestOf<Schemas['PipelineNodeRequest'], 'id' | 'notebook_path'>,
  'resources'
> & { resources?: IResourceRequest };
/** `POST pipelines`. */
export type IPipelineRequest = Omit<
  RequestOf<Schemas['PipelineRequest'], 'name' | 'nodes'>,
  'nodes'
> & { nodes: IPipelineNodeRequest[] };

// -- Dask clusters (dask/clusters)

/** A Dask cluster as it stands: scheduler address, dashboard, workers. */
export type IDaskCluster = S<'DaskCluster'>;
export type DaskClusterState = IDaskCluster['state'];
export type IDaskWorkers = S<'DaskWorkers'>;
export type IDaskPendingWorker = S<'DaskPendingWorker'>;
export type IDaskAdapt = S<'DaskAdapt'>;
/** `GET dask/clusters`: one page of clusters, newest first. */
export type IDaskClusterList = S<'DaskClusterList'>;
/** `POST dask/clusters`. At most one of kernel, environment and image. */
export type IDaskClusterRequest = Omit<
  RequestOf<Schemas['DaskClusterRequest'], never>,
  'resources'
> & { resources?: IResourceRequest };
/** `POST dask/clusters/{id}/scale`: a number of workers, or adapt bounds. */
export type IDaskScaleRequest = RequestOf<Schemas['DaskScaleRequest'], never>;

// -- Kernels on the batch system (batch-kernels)

/** A registered batch kernel: its kernelspec's name, where it runs, its kernels now. */
export type IBatchKernel = S<'BatchKernel'>;
/** `GET batch-kernels`: the registered batch kernels, by display name. */
export type IBatchKernelList = S<'BatchKernelList'>;
/** One kernel started from a batch kernelspec, as it stands. */
export type IBatchKernelSession = S<'BatchKernelSession'>;
export type BatchSessionState = IBatchKernelSession['state'];
/** `POST batch-kernels`. Exactly one of kernel, environment and image. */
export type IBatchKernelRequest = Omit<
  RequestOf<Schemas['BatchKernelRequest'], never>,
  'resources'
> & { resources?: IResourceRequest };
