package dev.mcb.world.core;

/**
 * One tick of the core's server-thread work inside one shared budget ({@link TickBudget}): settle the
 * observations of the last tick, run batches (leaving half of what is left of the tick to the reads
 * while reads wait), then the sliced reads with whatever is left. Server thread only.
 */
final class TickLoop {
    private final TickBudget budget;
    private final Runnable observations;
    private final BatchExecutor executor;
    private final SlicedWork work;

    TickLoop(TickBudget budget, Runnable observations, BatchExecutor executor, SlicedWork work) {
        this.budget = budget;
        this.observations = observations;
        this.executor = executor;
        this.work = work;
    }

    void tick() {
        budget.begin();
        long t0 = budget.now();
        observations.run();
        long t1 = budget.now();
        budget.chargeObservations(t1 - t0);
        executor.tick(budget.executorShare(work.waiting()));
        long t2 = budget.now();
        budget.chargeExecutor(t2 - t1);
        work.run(budget.deadline());
        budget.chargeReads(budget.now() - t2);
        budget.end();
    }
}
