// Turns of `execute_bash` commands in one workspace (restricted mode). The workspace check reads
// the filesystem before a command runs, so what another call changes meanwhile is not seen: an
// archive extraction that creates `link -> /outside` while a second call, checked a moment before,
// writes `link/x` or reads `link/secret` goes through the symlink. So an extraction takes its turn
// alone — its check and its run — and other commands take theirs together, never during an
// extraction: each call's check then sees what the extractions before it left.

/** A turn asked for with {@link takeTurn}. */
export interface Turn {
  /** Resolves once the turn is granted (at once when it is free); never rejects. */
  readonly granted: Promise<void>;
  /** Whether it is granted now (also right after {@link takeTurn}, when it was free). */
  readonly held: boolean;
  /** Ends the turn, or gives up waiting for it; calling it again does nothing. */
  end(): void;
}

/** The turns of one workspace: how many hold one together, whether one holds it alone, who waits (first come, first served). */
interface Turns {
  together: number;
  alone: boolean;
  readonly queue: Waiting[];
}

interface Waiting {
  readonly alone: boolean;
  readonly grant: () => void;
}

/** The workspaces with a turn held or awaited; an entry goes when its last turn ends. */
const workspaces = new Map<string, Turns>();

/**
 * Asks for a turn in the workspace `key` (its real path): `alone` for a command that no other may
 * overlap (an archive extraction), otherwise together with every other such command. Turns are
 * granted in the order asked, so an extraction is not starved by a stream of other commands.
 */
export function takeTurn(key: string, alone: boolean): Turn {
  let turns = workspaces.get(key);
  if (turns === undefined) {
    turns = { together: 0, alone: false, queue: [] };
    workspaces.set(key, turns);
  }
  const of = turns;
  let state: "waiting" | "held" | "ended" = "waiting";
  let grant = () => {};
  const granted = new Promise<void>((resolve) => {
    grant = resolve;
  });
  const waiting: Waiting = {
    alone,
    grant: () => {
      state = "held";
      grant();
    },
  };
  of.queue.push(waiting);
  grantTurns(of);
  return {
    granted,
    get held() {
      return state === "held";
    },
    end() {
      if (state === "ended") return;
      if (state === "held") {
        if (alone) of.alone = false;
        else of.together--;
      } else of.queue.splice(of.queue.indexOf(waiting), 1);
      state = "ended";
      grantTurns(of);
      if (!of.alone && of.together === 0 && of.queue.length === 0 && workspaces.get(key) === of) workspaces.delete(key);
    },
  };
}

/** How many workspaces have a turn held or awaited (for tests: none is kept once all ended). */
export function workspacesInTurn(): number {
  return workspaces.size;
}

/** How many calls wait for a turn in the workspace `key` (for tests). */
export function waitingTurns(key: string): number {
  return workspaces.get(key)?.queue.length ?? 0;
}

function grantTurns(turns: Turns): void {
  for (let next = turns.queue[0]; next !== undefined; next = turns.queue[0]) {
    if (turns.alone || (next.alone && turns.together > 0)) return;
    turns.queue.shift();
    if (next.alone) turns.alone = true;
    else turns.together++;
    next.grant();
    if (next.alone) return;
  }
}
