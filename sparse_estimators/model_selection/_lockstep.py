"""Several fits on one dask ``X`` sharing their passes: each round computes every fit's next request at once.

A search on a dask ``X`` whose losses read ``X`` at every iteration (the
logistic, multinomial and GLM losses) fits one model per fold. Run one
after the other, the folds cost ``n_folds`` times the passes of one fit.
:func:`run_in_lockstep` runs them in threads instead, under
:class:`LockstepScheduler`, a dask scheduler that holds each thread's
``dask.compute`` until every running fit has asked for its next one, then
evaluates all the requests as one graph: ``X``'s blocks are read once per
round, for every fold. Only one thread computes at a time; the fits' own
code (solvers, losses, designs) is unchanged and unaware of it.
"""

import threading

import sklearn


def _graph(dsk):
    """A ``dask.compute`` request's graph as a dict of tasks (an expression's or a HighLevelGraph's)."""
    from dask._task_spec import convert_legacy_graph
    from dask.utils import ensure_dict

    if not isinstance(dsk, dict):
        dsk = dsk.__dask_graph__() if hasattr(dsk, "__dask_graph__") else dsk
    return convert_legacy_graph(ensure_dict(dsk))


class LockstepScheduler:
    """A dask scheduler (``dask.config.set(scheduler=...)``) batching the computations of registered threads.

    Each registered thread's computation waits until every registered
    thread still running waits too; the last to arrive evaluates the union
    of their graphs with ``scheduler`` (the one that was active: threads,
    synchronous, a ``distributed`` client's ``get``) in one call, shared
    keys (``X``'s blocks) once. The requests that read no block of
    ``source`` go first, in a call of their own, and the readers wait on:
    ``X`` is read when every running fit asks to read it, so fits whose
    steps between passes differ do not read ``X`` in turns. Other threads
    compute directly.

    Parameters
    ----------
    scheduler : callable
        ``scheduler(dsk, keys, **kwargs)``, the scheduler the batches run on.
    source : str or None, default=None
        The name of the dask array whose blocks make a pass (``X``); None
        counts every batch.

    Attributes
    ----------
    n_passes : int
        The batches evaluated that read ``source`` (each reads the blocks its
        graphs need once); batches on arrays persisted on the workers alone
        (the fits' linear predictors) are not passes over ``X``.
    """

    def __init__(self, scheduler, source=None):
        self.scheduler = scheduler
        self.source = source
        self.n_passes = 0
        self._condition = threading.Condition()
        self._members = set()
        self._waiting = {}
        self._answers = {}

    def register(self, thread):
        with self._condition:
            self._members.add(thread)

    def leave(self):
        """The calling thread is done: the others no longer wait for it."""
        with self._condition:
            self._members.discard(threading.current_thread())
            self._run_if_ready()

    def __call__(self, dsk, keys, **kwargs):
        thread = threading.current_thread()
        with self._condition:
            member = thread in self._members
            if member:
                self._waiting[thread] = (dsk, keys, kwargs)
                self._run_if_ready()
                while thread not in self._answers:
                    self._condition.wait()
                ok, answer = self._answers.pop(thread)
        if not member:
            return self.scheduler(dsk, keys, **kwargs)
        if not ok:
            raise answer
        return answer

    def _run_if_ready(self):
        """With the lock held: evaluate the waiting requests if every running member waits."""
        if not self._waiting or len(self._waiting) < len(self._members):
            return
        # requests that read no block of source first, alone: their threads move on to their next pass, so a
        # pass waits until every fit asks for one (fits out of step would otherwise read X in turns)
        batch = {thread: request for thread, request in self._waiting.items() if not self._reads(_graph(request[0]))}
        batch = batch or self._waiting
        self._waiting = {thread: request for thread, request in self._waiting.items() if thread not in batch}
        graph, keys, kwargs = {}, [], {}
        for dsk, request, options in batch.values():
            graph.update(_graph(dsk))
            keys.append(request)
            kwargs = options
        self.n_passes += self._reads(graph)
        try:
            results = self.scheduler(graph, keys, **kwargs)
            for thread, result in zip(batch, results, strict=True):
                self._answers[thread] = (True, result)
        except Exception:  # (each request alone, so that only the fits whose graphs fail get their error)
            for thread, (dsk, request, options) in batch.items():
                single = _graph(dsk)
                self.n_passes += self._reads(single)
                try:
                    self._answers[thread] = (True, self.scheduler(single, request, **options))
                except Exception as error:
                    self._answers[thread] = (False, error)
        self._condition.notify_all()

    def _reads(self, graph):
        """Whether the tasks ``graph`` read blocks of ``source`` (1 or 0)."""
        if self.source is None:
            return 1
        return int(any((key[0] if isinstance(key, tuple) else key) == self.source for key in graph))


def run_in_lockstep(calls, collections, source=None):
    """Run the callables ``calls`` in threads whose dask computations share passes; their results, in order.

    ``collections``: dask collections whose default scheduler runs the
    batches when none is configured. An exception of a call is raised
    here (the first, in the order of ``calls``) after all have ended.

    Returns
    -------
    results : list
    scheduler : LockstepScheduler
        Its ``n_passes``: the batches evaluated that read ``source`` (see
        :class:`LockstepScheduler`).
    """
    import dask
    from dask.base import get_scheduler

    scheduler = LockstepScheduler(get_scheduler(collections=collections), source)
    results = [None] * len(calls)
    errors = [None] * len(calls)
    config = sklearn.get_config()  # (thread-local: _fit_context's settings, passed on)

    def run(i):
        try:
            with sklearn.config_context(**config):
                results[i] = calls[i]()
        except BaseException as error:  # (re-raised in the calling thread)
            errors[i] = error
        finally:
            scheduler.leave()

    threads = [threading.Thread(target=run, args=(i,), name=f"sparsity-cv-fold-{i}", daemon=True)
               for i in range(len(calls))]
    for thread in threads:
        scheduler.register(thread)
    # (no fusion: a block of X read by several folds' tasks stays one task, computed once per batch)
    with dask.config.set({"scheduler": scheduler, "optimization.fuse.active": False}):
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for error in errors:
        if error is not None:
            raise error
    return results, scheduler
