/**
 * Google Cloud Tasks dispatch for Node hosts (docs/decisions.md#dispatch-and-the-worker): an HTTP task created through the REST API
 * (`POST {base}/v2/projects/{project}/locations/{location}/queues/{queue}/tasks`) whose request POSTs the job as
 * JSON to SVC_TASKS_WORKER_URL with `Authorization: Bearer <SYSTEM_AUTH_TOKEN>`. The API's access token is the
 * configured one, or the metadata server's; the project, when not configured, is the metadata server's too.
 */
import type { TaskQueueConfig } from "../config/processing-config";
import type { Dispatcher } from "../processing/dispatcher";
import { passTimeLimitMs } from "../processing/lease";

const metadata = async (host: string, path: string): Promise<Response> => {
  const res = await fetch(`http://${host}/computeMetadata/v1/${path}`, { headers: { "Metadata-Flavor": "Google" }, redirect: "manual", signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`metadata server answered ${res.status} for ${path}`);
  return res;
};

export const createCloudTasksDispatcher = (tasks: TaskQueueConfig, systemAuthToken: string | undefined): Dispatcher => {
  let cached: { token: string; until: number } | undefined;
  let project = tasks.project;
  const accessToken = async (): Promise<string> => {
    if (tasks.accessToken) return tasks.accessToken;
    if (cached && cached.until > Date.now()) return cached.token;
    const body = (await (await metadata(tasks.metadataHost, "instance/service-accounts/default/token")).json()) as { access_token: string; expires_in: number };
    cached = { token: body.access_token, until: Date.now() + (body.expires_in - 60) * 1000 };
    return cached.token;
  };
  return {
    mode: "tasks",
    async dispatch(job) {
      if (!systemAuthToken) throw new Error("task dispatch needs SYSTEM_AUTH_TOKEN: the worker route fails closed without it");
      project ??= (await (await metadata(tasks.metadataHost, "project/project-id")).text()).trim();
      const parent = `projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(tasks.location)}/queues/${encodeURIComponent(tasks.queue)}`;
      const task = {
        task: {
          // Cloud Tasks waits 10 minutes for an HTTP target by default, then retries a pass still running; a pass
          // may take 15 (passTimeLimitMs), so the task waits for all of it (the API takes up to 30 minutes).
          dispatchDeadline: `${passTimeLimitMs / 1000 + 30}s`,
          httpRequest: {
            httpMethod: "POST",
            url: tasks.workerUrl,
            headers: { "Content-Type": "application/json", Authorization: `Bearer ${systemAuthToken}` },
            body: Buffer.from(JSON.stringify({ appId: job.appId, postId: job.postId })).toString("base64"),
          },
        },
      };
      const res = await fetch(`${tasks.baseUrl}/v2/${parent}/tasks`, {
        method: "POST",
        headers: { Authorization: `Bearer ${await accessToken()}`, "Content-Type": "application/json" },
        body: JSON.stringify(task),
        redirect: "manual",
        signal: AbortSignal.timeout(10_000),
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`Cloud Tasks answered ${res.status} creating a task`);
    },
  };
};
