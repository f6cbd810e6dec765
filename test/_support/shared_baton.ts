// One workerd per test file: the tests of a file that need no restart share one Worker and one fake model, each in sessions of its own; Deno.
import { testVars } from "./clients.ts";
import { type FakeModel, startFakeModel } from "../../lib/testing/fake_model.ts";
import { type FakePlatform, startFakePlatform } from "./fake_platform.ts";
import { apiRoots } from "./platform_rig.ts";
import { type DirectoryMode, startWorker, type TestWorker } from "./worker.ts";

/** A test body on the shared Worker: the fake model and the fake platform API are reset for it. */
export type SharedTestFn = (
  worker: TestWorker,
  fake: FakeModel,
  platform: FakePlatform,
) => Promise<void>;

/** The tests of one file on one Worker (see {@link sharedBaton}). */
export interface SharedBaton {
  /**
   * Registers a test that runs on the file's Worker, started by the first test that needs it. The
   * fakes are reset before each test (the model echoes, the platform answers as usual, their
   * records empty); the Worker's state is not, so each test uses session keys, chats, users and
   * ids of its own, and signing keys made once for the file (the Worker caches key sets).
   */
  test(name: string, fn: SharedTestFn): void;
  /**
   * Registers the file's last test: stops the Worker, failing when its output holds a configured
   * secret. Call it once, after every `test` of the file.
   */
  done(): void;
}

/**
 * The Worker, fake model and fake platform API a test file's tests share: `withBaton`'s settings
 * (the test API key, the webhook secret, an open access policy, the fake as the model), every
 * platform pointed at the fake platform as `withPlatform` does, then `opts.vars` (a var set to
 * `undefined` is left out). Starting workerd is most of what a small workerd test costs: a file
 * starts one, and only a test whose subject is a restart or another configuration starts its own.
 */
export function sharedBaton(
  opts: {
    vars?: Record<string, string | undefined>;
    directory?: DirectoryMode;
    /** Names this Worker in its stop test, where a file has more than one. */
    label?: string;
    /** The Worker's entry, relative to the project root (default functions/index.ts). */
    entry?: string;
    /** Bind the `MEDIA` R2 bucket; default none. */
    media?: boolean;
    /** Bind `EMAIL_OUT` and open the email handler (`TestWorker.mails`); default none. */
    email?: boolean;
    /** More Durable Object bindings (binding → class), beside baton's four. */
    durableObjects?: Record<string, string>;
  } = {},
): SharedBaton {
  let started:
    | Promise<{ worker: TestWorker; fake: FakeModel; platform: FakePlatform }>
    | undefined;
  const start = () =>
    started ??= (async () => {
      const fake = await startFakeModel();
      const platform = await startFakePlatform();
      try {
        const all: Record<string, string | undefined> = {
          ...testVars(fake),
          ...apiRoots(platform),
          ...opts.vars,
        };
        const vars = Object.fromEntries(
          Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined),
        );
        const worker = await startWorker({
          vars,
          directory: opts.directory,
          entry: opts.entry,
          media: opts.media,
          email: opts.email,
          durableObjects: opts.durableObjects,
        });
        return { worker, fake, platform };
      } catch (e) {
        await fake.close();
        await platform.close();
        throw e;
      }
    })();
  // The Worker outlives each test on purpose: Deno's sanitizers would count it as a leak.
  const sanitizers = { sanitizeOps: false, sanitizeResources: false };
  const register = (name: string, fn: SharedTestFn) =>
    Deno.test({
      name,
      ...sanitizers,
      async fn() {
        const { worker, fake, platform } = await start();
        fake.reset();
        platform.reset();
        try {
          await fn(worker, fake, platform);
        } finally {
          // A hold the test left armed must not keep a turn of its running into the next test.
          fake.release();
        }
      },
    });
  return {
    test: register,
    done() {
      Deno.test({
        name: `the file's shared Worker${
          opts.label ? ` (${opts.label})` : ""
        } stops, its output holding no configured secret`,
        ...sanitizers,
        async fn() {
          if (!started) return;
          const { worker, fake, platform } = await started;
          fake.release();
          try {
            await worker.dispose();
          } finally {
            await fake.close();
            await platform.close();
          }
        },
      });
    },
  };
}
