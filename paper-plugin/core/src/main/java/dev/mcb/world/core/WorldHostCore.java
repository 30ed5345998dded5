package dev.mcb.world.core;

import com.google.gson.JsonArray;
import com.google.protobuf.Message;
import dev.mcb.proto.common.v1.Box;
import dev.mcb.proto.common.v1.Vec3;
import dev.mcb.proto.world.v1.AutomationBlock;
import dev.mcb.proto.world.v1.AutomationChatOutboxParams;
import dev.mcb.proto.world.v1.AutomationChatOutboxResult;
import dev.mcb.proto.world.v1.AutomationChatParams;
import dev.mcb.proto.world.v1.AutomationChatResult;
import dev.mcb.proto.world.v1.AutomationSetBlocksParams;
import dev.mcb.proto.world.v1.AutomationSetBlocksResult;
import dev.mcb.proto.world.v1.BatchAnswer;
import dev.mcb.proto.world.v1.BatchApplyManyParams;
import dev.mcb.proto.world.v1.BatchApplyManyResult;
import dev.mcb.proto.world.v1.BatchApplyParams;
import dev.mcb.proto.world.v1.BatchApplyResult;
import dev.mcb.proto.world.v1.BatchCancelParams;
import dev.mcb.proto.world.v1.BatchCancelResult;
import dev.mcb.proto.world.v1.BlockEvent;
import dev.mcb.proto.world.v1.BlocksGetParams;
import dev.mcb.proto.world.v1.BlocksGetResult;
import dev.mcb.proto.world.v1.CameraAccountPoseParams;
import dev.mcb.proto.world.v1.CameraAccountPoseResult;
import dev.mcb.proto.world.v1.ChatMessage;
import dev.mcb.proto.world.v1.ChunksExistParams;
import dev.mcb.proto.world.v1.ChunksExistResult;
import dev.mcb.proto.world.v1.ChatPollParams;
import dev.mcb.proto.world.v1.ChatPollResult;
import dev.mcb.proto.world.v1.ChatPreviewParams;
import dev.mcb.proto.world.v1.ChatPreviewResult;
import dev.mcb.proto.world.v1.ChatReplyParams;
import dev.mcb.proto.world.v1.ChatReplyResult;
import dev.mcb.proto.world.v1.Empty;
import dev.mcb.proto.world.v1.EventRun;
import dev.mcb.proto.world.v1.EventsSinceParams;
import dev.mcb.proto.world.v1.EventsSinceResult;
import dev.mcb.proto.world.v1.Health;
import dev.mcb.proto.world.v1.PauseParams;
import dev.mcb.proto.world.v1.PauseResult;
import dev.mcb.proto.world.v1.PlayerContextParams;
import dev.mcb.proto.world.v1.PlayerContextResult;
import dev.mcb.proto.world.v1.PlayerPosition;
import dev.mcb.proto.world.v1.RegionReadParams;
import dev.mcb.proto.world.v1.RegionReadResult;
import dev.mcb.proto.world.v1.RegistryInfo;
import dev.mcb.proto.world.v1.TargetBlock;
import dev.mcb.proto.world.v1.WorldInfo;
import dev.mcb.world.core.port.ChatSink;
import dev.mcb.world.core.port.Players;
import dev.mcb.world.core.port.Scheduler;
import dev.mcb.world.core.port.WorldAccess;
import dev.mcb.world.core.port.WorldDescriptor;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The world protocol's methods over the ports: protobuf messages in, messages out. {@link RpcServer}
 * owns HTTP (envelope, tokens, scopes, limits); this class owns the rules. Platform adapters call
 * {@link #observe}, {@link #chat()}, {@link #executor()} and the player helpers; they hold no logic.
 */
public final class WorldHostCore {
    public static final String PROTOCOL = "mcb.world.v1";
    public static final int MAX_REGION_POSITIONS = 2_097_152;
    public static final int MAX_BLOCKS_GET = 100_000;
    public static final int MAX_AUTOMATION_BLOCKS = 32_768;
    /** batch_apply_many takes at most this many batches a request. */
    public static final int MAX_BATCHES_PER_REQUEST = 16;
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger("mcb.world.core");

    private final HostConfig config;
    private final WorldAccess world;
    private final Scheduler scheduler;
    private final Players players;
    private final String instance;
    private volatile String serverVersion = "";
    private volatile Previews previews = new Previews(Previews.Port.NONE, System::currentTimeMillis);
    private volatile CameraAccount camera = new CameraAccount(CameraAccount.Settings.NONE, null, System::currentTimeMillis);
    private final EventLog events;
    private final SectionRevisions revisions;
    private final HostState state; // null: nothing survives a restart
    private final BatchExecutor executor;
    private final ChatQueue chat;
    private final TickBudget budget = new TickBudget(BatchExecutor.BUDGET_NANOS, System::nanoTime);
    private final SlicedWork work = new SlicedWork(System::nanoTime);
    private final WorldReads reads;
    private final Observations observations;
    private final TickLoop loop;
    private final Map<String, Function<Message, Message>> handlers = new HashMap<>();

    public WorldHostCore(HostConfig config, WorldAccess world, Scheduler scheduler, Players players, ChatSink chatSink) {
        this(config, world, scheduler, players, chatSink, null);
    }

    /**
     * With {@code state} (the data folder, {@link HostState}): the pause flag, idempotency records and the
     * event tail of the previous process are restored, and new ones made durable. After an unclean stop,
     * {@link #verifyRestart()} re-reads our writes made after the last save (world_info reports them as
     * being checked until it is done).
     */
    public WorldHostCore(HostConfig config, WorldAccess world, Scheduler scheduler, Players players, ChatSink chatSink,
                         HostState state) {
        this.config = config;
        this.world = world;
        this.scheduler = scheduler;
        this.players = players;
        this.state = state;
        if (state == null) {
            byte[] r = new byte[8];
            new SecureRandom().nextBytes(r);
            this.instance = HexFormat.of().formatHex(r);
            this.events = new EventLog(instance);
            this.revisions = new SectionRevisions();
        } else {
            this.instance = state.logId();
            this.events = new EventLog(instance, EventLog.DEFAULT_RETAIN, state.seqBase(), state.tail());
            this.events.restartNote(state::restartNote);
            this.events.sink(state::event);
            this.revisions = new SectionRevisions(state.revisionBase());
        }
        this.executor = new BatchExecutor(world, (changes, op) -> {
            for (BatchExecutor.Change c : changes) {
                revisions.bump(c.x() >> 4, c.y() >> 4, c.z() >> 4);
                events.record(c.x(), c.y(), c.z(), c.before(), c.after(), Source.OURS, "", op);
            }
        });
        this.executor.revisions(revisions);
        this.reads = new WorldReads(world, work, config.callTimeout().toMillis());
        WorldDescriptor wd = world.describe();
        this.observations = new Observations(world, wd.minY(), wd.maxY(), this::recordForeign);
        this.loop = new TickLoop(budget, observations::flush, executor, work);
        if (state != null) {
            executor.restore(state.paused(), state.pauseReason(), state.batches(), state);
            state.onFailure(reason -> executor.pause(reason + "; writes paused"));
        }
        this.chat = new ChatQueue(chatSink, m -> executor.stopActive("/ai stop by " + m.playerId()),
                client -> {
                    executor.stopActive("a new AI bridge connected (client "
                            + (client.length() > 60 ? client.substring(0, 60) : client) + ")");
                    // the old bridge's plans are no longer offered: no client keeps showing one
                    scheduler.call(() -> {
                        previews.clearAll("a new AI bridge connected");
                        return null;
                    });
                },
                System::currentTimeMillis);
        scheduler.everyTick(this::tick);
        scheduler.everyTick(() -> previews.expire());
        handlers.put("world_info", m -> worldInfo());
        handlers.put("region_read", m -> regionRead((RegionReadParams) m));
        handlers.put("chunks_exist", m -> chunksExist((ChunksExistParams) m));
        handlers.put("blocks_get", m -> blocksGet((BlocksGetParams) m));
        handlers.put("batch_apply", m -> batchApply((BatchApplyParams) m));
        handlers.put("batch_apply_many", m -> batchApplyMany((BatchApplyManyParams) m));
        handlers.put("batch_cancel", m -> batchCancel((BatchCancelParams) m));
        handlers.put("events_since", m -> eventsSince((EventsSinceParams) m));
        handlers.put("pause", m -> pause((PauseParams) m));
        handlers.put("resume", m -> resume((PauseParams) m));
        handlers.put("automation_set_blocks", m -> automationSetBlocks((AutomationSetBlocksParams) m));
        handlers.put("automation_chat", m -> automationChat((AutomationChatParams) m));
        handlers.put("automation_chat_outbox", m -> automationChatOutbox((AutomationChatOutboxParams) m));
        handlers.put("chat_poll", m -> chatPoll((ChatPollParams) m));
        handlers.put("chat_reply", m -> chatReply((ChatReplyParams) m));
        handlers.put("player_context", m -> playerContext((PlayerContextParams) m));
        handlers.put("camera_account_pose", m -> cameraAccountPose((CameraAccountPoseParams) m));
        handlers.put("chat_preview", m -> chatPreview((ChatPreviewParams) m));
    }

    public HostConfig config() {
        return config;
    }

    public String instance() {
        return instance;
    }

    public EventLog events() {
        return events;
    }

    public BatchExecutor executor() {
        return executor;
    }

    public ChatQueue chat() {
        return chat;
    }

    /** The data folder's state, or null when nothing survives a restart. */
    public HostState state() {
        return state;
    }

    public SectionRevisions revisions() {
        return revisions;
    }

    /** The default params message of a method (its type comes from methods.json). */
    public static Message.Builder paramsBuilder(String type) {
        return switch (type) {
            case "Empty" -> Empty.newBuilder();
            case "RegionReadParams" -> RegionReadParams.newBuilder();
            case "ChunksExistParams" -> ChunksExistParams.newBuilder();
            case "BlocksGetParams" -> BlocksGetParams.newBuilder();
            case "BatchApplyParams" -> BatchApplyParams.newBuilder();
            case "BatchApplyManyParams" -> BatchApplyManyParams.newBuilder();
            case "BatchCancelParams" -> BatchCancelParams.newBuilder();
            case "EventsSinceParams" -> EventsSinceParams.newBuilder();
            case "PauseParams" -> PauseParams.newBuilder();
            case "AutomationSetBlocksParams" -> AutomationSetBlocksParams.newBuilder();
            case "AutomationChatParams" -> AutomationChatParams.newBuilder();
            case "AutomationChatOutboxParams" -> AutomationChatOutboxParams.newBuilder();
            case "ChatPollParams" -> ChatPollParams.newBuilder();
            case "ChatReplyParams" -> ChatReplyParams.newBuilder();
            case "PlayerContextParams" -> PlayerContextParams.newBuilder();
            case "CameraAccountPoseParams" -> CameraAccountPoseParams.newBuilder();
            case "ChatPreviewParams" -> ChatPreviewParams.newBuilder();
            default -> null;
        };
    }

    public boolean handles(String method) {
        return handlers.containsKey(method);
    }

    public Message call(String method, Message params) {
        Function<Message, Message> h = handlers.get(method);
        if (h == null) {
            throw McbException.invalid(method + " is not implemented yet by the Java world host");
        }
        return h.apply(params);
    }

    // ---- health / info ---------------------------------------------------------------------------------
    public Health health() {
        return Health.newBuilder().setStatus("ok").setService(config.service()).setVersion(config.version())
                .setProtocolVersion(PROTOCOL).setPaused(executor.paused()).build();
    }

    /** The game server's own version string (Paper: name and version), shown in {@code world_info}. */
    public void serverVersion(String version) {
        this.serverVersion = version == null ? "" : version;
    }

    public WorldInfo worldInfo() {
        WorldDescriptor d = world.describe();
        List<String> caps = new ArrayList<>(List.of("region_read", "chunks_exist", "blocks_get", "batch_apply",
                "batch_apply_many", "events_since", "events_since.runs", "pause", "environment_events", "chat"));
        if (config.allowLocalAutomation()) {
            caps.add("local_automation");
        }
        if (state != null) {
            caps.add("durable_state");
        }
        if (camera.configured()) {
            caps.add("camera_account_pose");
        }
        if (previews.supported()) {
            caps.add("chat_preview");
        }
        WorldInfo.Builder b = WorldInfo.newBuilder().setWorldUuid(d.worldUuid()).setWorldName(d.worldName())
                .setEpoch(d.epoch()).setDataVersion(d.dataVersion()).setMinecraftVersion(d.minecraftVersion())
                .setMinY(d.minY()).setMaxY(d.maxY())
                .setRegistry(RegistryInfo.newBuilder().setMinecraftVersion(d.registryVersion())
                        .setDataVersion(d.registryDataVersion()).setBlockCount(d.registryBlockCount())
                        .setSha256(d.registrySha256()))
                .setHostInstance(instance).setPaused(executor.paused()).addAllCapabilities(caps)
                .setHostKind(config.service()).setHostVersion(config.version()).setServerVersion(serverVersion)
                .setProtocolVersion(PROTOCOL);
        if (state != null) {
            b.setLastRestart(state.restartInfo());
        }
        int[] a = d.loadedArea();
        if (a != null) {
            b.setLoadedArea(Box.newBuilder()
                    .setMin(Vec3.newBuilder().setX(a[0]).setY(d.minY() >> 4).setZ(a[1]))
                    .setMax(Vec3.newBuilder().setX(a[2]).setY(d.maxY() >> 4).setZ(a[3])));
        }
        return b.build();
    }

    // ---- reads (WorldReads: chunks held off the server thread, positions read in budgeted slices) -------
    /**
     * The restart check (HostState): re-read our writes made after the last world save and record which were
     * rolled back with the world. Blocks the calling thread, never the server thread: the chunks are held off
     * it {@link WorldReads#HOLD_WINDOW} at a time, and the positions are read by the tick in slices inside the
     * shared per-tick budget, like any read. Call it from a thread of its own once the tick runs.
     */
    public void verifyRestart() {
        if (state == null) {
            return;
        }
        List<HostState.UnsavedWrite> checks = state.restartChecks();
        if (checks.isEmpty()) {
            return;
        }
        List<int[]> positions = new ArrayList<>(checks.size());
        for (HostState.UnsavedWrite w : checks) {
            positions.add(new int[] {w.x(), w.y(), w.z()});
        }
        state.restartChecked(checks, reads.readOrMissing(positions));
    }

    /** chunks_exist: which chunks of the range exist (WorldAccess.chunkExists; never loads or generates). */
    public ChunksExistResult chunksExist(ChunksExistParams p) {
        int cx0 = Math.min(p.getMinCx(), p.getMaxCx()), cx1 = Math.max(p.getMinCx(), p.getMaxCx());
        int cz0 = Math.min(p.getMinCz(), p.getMaxCz()), cz1 = Math.max(p.getMinCz(), p.getMaxCz());
        int[] count = new int[1];
        byte[] bits = reads.chunksExist(cx0, cz0, cx1, cz1, count);
        return ChunksExistResult.newBuilder().setMinCx(cx0).setMinCz(cz0).setMaxCx(cx1).setMaxCz(cz1)
                .setBitmap(com.google.protobuf.ByteString.copyFrom(bits)).setCount(count[0]).build();
    }

    public RegionReadResult regionRead(RegionReadParams p) {
        if (!p.hasMin() || !p.hasMax()) {
            throw McbException.invalid("region_read needs min and max {x,y,z}");
        }
        return reads.regionRead(Math.min(p.getMin().getX(), p.getMax().getX()),
                Math.min(p.getMin().getY(), p.getMax().getY()), Math.min(p.getMin().getZ(), p.getMax().getZ()),
                Math.max(p.getMin().getX(), p.getMax().getX()), Math.max(p.getMin().getY(), p.getMax().getY()),
                Math.max(p.getMin().getZ(), p.getMax().getZ()), revisions);
    }

    public BlocksGetResult blocksGet(BlocksGetParams p) {
        return reads.blocksGet(p.getXyzList());
    }

    /** The shared per-tick budget's accounting (observations, executor, reads). */
    public TickBudget budget() {
        return budget;
    }

    // ---- batches -------------------------------------------------------------------------------------
    public BatchApplyResult batchApply(BatchApplyParams p) {
        return applyOne(p, null);
    }

    /**
     * One batch as batch_apply takes it: its chunks held off the server thread, queued for the tick, the caller
     * waiting within the call time limit ({@code busy} and withdrawn when it did not start in time). With a
     * {@code sequence} (batch_apply_many) it runs in a later tick than the sequence's previous batch and may end
     * in {@link BatchExecutor.NotStarted} (its operation was cancelled before it began).
     */
    private BatchApplyResult applyOne(BatchApplyParams p, BatchExecutor.Sequence sequence) {
        WorldDescriptor d = world.describe();
        // the batch's chunks are loaded (never generated) and held off the server thread first, so the
        // executor's tick never loads one; the hold ends with the batch
        dev.mcb.world.core.port.ChunkHold hold = null;
        if (p.getEntriesCount() <= BatchExecutor.MAX_BATCH_ENTRIES
                && p.getDependenciesCount() <= BatchExecutor.MAX_BATCH_DEPENDENCIES) {
            List<int[]> positions = new ArrayList<>();
            p.getEntriesList().forEach(e -> positions.add(new int[] {e.getX(), e.getY(), e.getZ()}));
            p.getDependenciesList().forEach(e -> positions.add(new int[] {e.getX(), e.getY(), e.getZ()}));
            hold = reads.holdAll(WorldReads.chunkKeysOf(positions));
        }
        CompletableFuture<BatchApplyResult> f;
        try {
            f = executor.submit(p, d.epoch(), d.minY(), d.maxY(), sequence);
        } catch (RuntimeException e) {
            if (hold != null) {
                hold.close();
            }
            throw e;
        }
        if (hold != null) {
            dev.mcb.world.core.port.ChunkHold h = hold;
            f.whenComplete((r, e) -> h.close());
        }
        try {
            return f.get(config.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            if (executor.withdraw(f)) {
                throw new McbException(ErrorCode.BUSY, "the server did not start this batch within "
                        + config.callTimeout().toSeconds() + " s; nothing was written; retry with the same batchId");
            }
            return await(f); // it is running: its answer is moments away
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new McbException(ErrorCode.UNAVAILABLE, "interrupted while waiting for the server thread");
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    /**
     * batch_apply_many (docs/world-protocol.md): up to {@link #MAX_BATCHES_PER_REQUEST} batches, taken in
     * order, each exactly as {@link #batchApply} takes it alone (own id and record, compare-and-set,
     * all-or-nothing, the same refusals, durable before its answer) and each in its own tick under the tick
     * budget: the next batch is submitted only once the previous one is answered, and runs in a later tick.
     * Before each batch after the first the pause flag is checked, and before every batch the operations
     * {@code batch_cancel} named (here on the calling thread, and again on the server thread right before it
     * starts); a batch that is not applied ends the request. Whole-request refusals come before anything is read.
     */
    public BatchApplyManyResult batchApplyMany(BatchApplyManyParams p) {
        int n = p.getBatchesCount();
        if (n == 0) {
            throw McbException.invalid("batch_apply_many needs at least one batch (1.." + MAX_BATCHES_PER_REQUEST + ")");
        }
        if (n > MAX_BATCHES_PER_REQUEST) {
            com.google.gson.JsonObject det = new com.google.gson.JsonObject();
            det.addProperty("limit", "batches");
            det.addProperty("max", MAX_BATCHES_PER_REQUEST);
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "batch_apply_many takes at most " + MAX_BATCHES_PER_REQUEST
                    + " batches a request, got " + n + "; send the rest in another request", det);
        }
        Set<String> ids = new HashSet<>();
        for (BatchApplyParams b : p.getBatchesList()) {
            if (!ids.add(b.getBatchId())) {
                String shown = b.getBatchId().length() > 200 ? b.getBatchId().substring(0, 200) : b.getBatchId();
                com.google.gson.JsonObject det = new com.google.gson.JsonObject();
                det.addProperty("batchId", shown);
                throw new McbException(ErrorCode.INVALID_REQUEST, "batch id '" + shown + "' appears more than once in "
                        + "this request; every batch of a request needs its own id", det);
            }
        }
        BatchExecutor.Sequence sequence = new BatchExecutor.Sequence();
        BatchApplyManyResult.Builder out = BatchApplyManyResult.newBuilder();
        String stop = null; // why the batches from here on are not started
        for (int i = 0; i < n; i++) {
            BatchApplyParams b = p.getBatches(i);
            if (stop == null && i > 0 && executor.paused()) {
                stop = "paused";
            }
            if (stop == null && executor.cancelled(b.getOperationId())) {
                stop = "cancelled";
            }
            if (stop != null) {
                out.addAnswers(notStarted(b, stop));
                continue;
            }
            try {
                BatchApplyResult r = applyOne(b, sequence);
                out.addAnswers(BatchAnswer.newBuilder().setBatchId(b.getBatchId()).setOutcome("answered").setResult(r));
                if (!"applied".equals(r.getStatus())) {
                    stop = "after_conflict";
                }
            } catch (BatchExecutor.NotStarted e) {
                stop = e.reason;
                out.addAnswers(notStarted(b, stop));
            } catch (McbException e) {
                if (i > 0 && e.code == ErrorCode.PAUSED) {
                    // a pause landed after the check above, before this batch began: it did not start
                    stop = "paused";
                    out.addAnswers(notStarted(b, stop));
                } else {
                    stop = "after_error";
                    out.addAnswers(BatchAnswer.newBuilder().setBatchId(b.getBatchId()).setOutcome("error")
                            .setError(error(e)));
                }
            } catch (RuntimeException e) {
                LOG.log(java.util.logging.Level.SEVERE, "internal error in batch_apply_many (batch "
                        + b.getBatchId() + ")", e);
                stop = "after_error";
                out.addAnswers(BatchAnswer.newBuilder().setBatchId(b.getBatchId()).setOutcome("error")
                        .setError(error(new McbException(ErrorCode.INTERNAL, "internal error ("
                                + e.getClass().getSimpleName() + "); see the world host log"))));
            }
        }
        return out.build();
    }

    private static BatchAnswer notStarted(BatchApplyParams b, String reason) {
        return BatchAnswer.newBuilder().setBatchId(b.getBatchId()).setOutcome("not_started").setReason(reason).build();
    }

    /** An error as the envelope carries it ({@link McbException#toJson}), as an {@code mcb.common.v1.Error}. */
    static dev.mcb.proto.common.v1.Error error(McbException e) {
        return dev.mcb.proto.common.v1.Error.newBuilder().setCode(e.code.wire)
                .setMessage(e.getMessage() == null ? "" : e.getMessage()).setRetryable(e.code.retryable)
                .setDetailsJson(e.details == null ? "" : e.details.toString()).build();
    }

    /**
     * batch_cancel: no batch of the operation starts after this answers, in any batch_apply_many request (a batch
     * already being written finishes; plain batch_apply is not affected). In memory, the last 4,096 names.
     */
    public BatchCancelResult batchCancel(BatchCancelParams p) {
        executor.cancel(p.getOperationId());
        return BatchCancelResult.newBuilder().setOperationId(p.getOperationId()).setCancelled(true).build();
    }

    private static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new McbException(ErrorCode.UNAVAILABLE, "interrupted while waiting for the server thread");
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    /** The server thread's failure as the call answers it: an McbException as it is, a batch of a
     *  batch_apply_many request that did not start ({@link BatchExecutor.NotStarted}) as it is, anything else
     *  as an internal error. */
    static RuntimeException unwrap(ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof McbException m) {
            return m;
        }
        if (c instanceof BatchExecutor.NotStarted n) {
            return n;
        }
        return new McbException(ErrorCode.INTERNAL, "internal error on the server thread ("
                + (c == null ? "?" : c.getClass().getSimpleName()) + "); see the server log");
    }

    /** Run on the server thread and wait, within the call time limit. */
    public <T> T onServer(java.util.concurrent.Callable<T> task) {
        CompletableFuture<T> f = scheduler.call(task);
        try {
            return f.get(config.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw new McbException(ErrorCode.BUSY, "the server thread did not answer within "
                    + config.callTimeout().toSeconds() + " s (lagging server?); retry later");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new McbException(ErrorCode.UNAVAILABLE, "interrupted while waiting for the server thread");
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    // ---- events --------------------------------------------------------------------------------------
    /**
     * A block change the platform observed (adapter listeners, on the server thread). Changes while the
     * executor itself writes are ours and already recorded; they are ignored here.
     */
    public void observe(int x, int y, int z, String before, String after, Source source, String playerId) {
        observe(x, y, z, before, after, source, playerId, "", "");
    }

    /** {@link #observe} with the player's name (source player) or the cause (source environment, {@link Cause}). */
    public void observe(int x, int y, int z, String before, String after, Source source, String playerId,
                        String playerName, String cause) {
        if (executor.writing() || source == Source.OURS) {
            return;
        }
        String b = BatchExecutor.airNormalize(before);
        String a = BatchExecutor.airNormalize(after);
        if (b.equals(a) && source != Source.PLAYER) {
            return;
        }
        revisions.bump(x >> 4, y >> 4, z >> 4);
        events.record(x, y, z, b, a, source, playerId, "", playerName, cause);
    }

    /** A foreign change the core recorded itself (observation re-reads, automation): bump and log. */
    private void recordForeign(int x, int y, int z, String before, String after, Observations.Who who) {
        revisions.bump(x >> 4, y >> 4, z >> 4);
        events.record(x, y, z, before, after, who.source(), who.playerId(), "", who.playerName(), who.cause());
    }

    /**
     * A block at a position is about to change (or just changed) for a known cause, and the platform
     * cannot tell the final state yet (breaks, explosions, pistons, fluids): remember the state before;
     * the next tick reads the state after and records the event if the block really changed. The first
     * report for a position within a tick wins (it holds the oldest "before"). Server thread only.
     */
    public void observeLater(int x, int y, int z, String before, Source source, String playerId) {
        observeLater(x, y, z, before, source, playerId, "", "");
    }

    /** {@link #observeLater} with the player's name (source player) or the cause (source environment). */
    public void observeLater(int x, int y, int z, String before, Source source, String playerId, String playerName,
                             String cause) {
        if (executor.writing() || source == Source.OURS) {
            return;
        }
        observations.report(x, y, z, before, new Observations.Who(source, playerId, playerName, cause));
    }

    /**
     * {@link #observeLater} for the position and its six neighbours (their current states, read now, are
     * their "before"; neighbours in unloaded chunks are skipped, never loaded): the next tick records what
     * really changed around the cause too — the other half of a door or bed, blocks that pop off, fences,
     * panes, walls and stairs changing shape. Server thread only.
     */
    public void observeAround(int x, int y, int z, String before, Source source, String playerId) {
        observeAround(x, y, z, before, source, playerId, "", "");
    }

    /** {@link #observeAround} with the player's name (source player) or the cause (source environment). */
    public void observeAround(int x, int y, int z, String before, Source source, String playerId, String playerName,
                              String cause) {
        if (executor.writing() || source == Source.OURS) {
            return;
        }
        observations.reportAround(x, y, z, before, new Observations.Who(source, playerId, playerName, cause));
    }

    /**
     * The per-tick hook (server thread), inside one shared budget ({@link TickLoop}): settle the
     * observations of the last tick, run batches, then the sliced reads with what is left.
     */
    public void tick() {
        loop.tick();
    }

    /** Record pending observations whose block really changed (called first thing in every tick). */
    public void flushObservations() {
        observations.flush();
    }

    public EventsSinceResult eventsSince(EventsSinceParams p) {
        if (p.getLimit() > EventLog.MAX_PAGE) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "limit " + p.getLimit() + " exceeds the page size of "
                    + EventLog.MAX_PAGE);
        }
        int[] region = null;
        if (p.hasRegion()) {
            Box b = p.getRegion();
            region = new int[] {Math.min(b.getMin().getX(), b.getMax().getX()), Math.min(b.getMin().getY(), b.getMax().getY()),
                Math.min(b.getMin().getZ(), b.getMax().getZ()), Math.max(b.getMin().getX(), b.getMax().getX()),
                Math.max(b.getMin().getY(), b.getMax().getY()), Math.max(b.getMin().getZ(), b.getMax().getZ())};
        }
        EventLog.Page page = events.since(p.getCursor(), p.getLimit() == 0 ? EventLog.MAX_PAGE : p.getLimit(), region);
        EventsSinceResult.Builder r = EventsSinceResult.newBuilder().setNextCursor(page.nextCursor())
                .setResyncRequired(page.resyncRequired()).setComplete(page.complete()).setReason(page.reason());
        if (p.getRuns()) {
            addRuns(r, page.events());
            return r.build();
        }
        for (EventLog.Event e : page.events()) {
            r.addEvents(BlockEvent.newBuilder().setSeq(e.seq()).setX(e.x()).setY(e.y()).setZ(e.z()).setBefore(e.before())
                    .setAfter(e.after()).setSource(e.source().wire).setPlayerId(e.playerId()).setAtMillis(e.atMillis())
                    .setOperationId(e.operationId()).setPlayerName(e.playerName()).setCause(e.cause()));
        }
        return r.build();
    }

    /**
     * A page's events as runs (issue 29, docs/world-protocol.md "Runs"): consecutive seqs of one writer at
     * one time as columns, each state named once a run. A batch's echoes recorded within one millisecond
     * are one run; one that crosses a millisecond boundary is two.
     */
    static void addRuns(EventsSinceResult.Builder r, List<EventLog.Event> events) {
        EventRun.Builder run = null;
        Map<String, Integer> states = new HashMap<>();
        EventLog.Event prev = null;
        for (EventLog.Event e : events) {
            if (run == null || !sameRun(prev, e)) {
                if (run != null) {
                    r.addRuns(run);
                }
                run = EventRun.newBuilder().setFirstSeq(e.seq()).setSource(e.source().wire).setPlayerId(e.playerId())
                        .setAtMillis(e.atMillis()).setOperationId(e.operationId()).setPlayerName(e.playerName())
                        .setCause(e.cause());
                states.clear();
            }
            run.addX(e.x()).addY(e.y()).addZ(e.z()).addBefore(stateIndex(run, states, e.before()))
                    .addAfter(stateIndex(run, states, e.after()));
            prev = e;
        }
        if (run != null) {
            r.addRuns(run);
        }
    }

    private static boolean sameRun(EventLog.Event a, EventLog.Event b) {
        return b.seq() == a.seq() + 1 && a.source() == b.source() && a.playerId().equals(b.playerId())
                && a.atMillis() == b.atMillis() && a.operationId().equals(b.operationId())
                && a.playerName().equals(b.playerName()) && a.cause().equals(b.cause());
    }

    private static int stateIndex(EventRun.Builder run, Map<String, Integer> states, String state) {
        Integer i = states.get(state);
        if (i == null) {
            i = states.size();
            states.put(state, i);
            run.addStates(state);
        }
        return i;
    }

    // ---- pause ---------------------------------------------------------------------------------------
    public PauseResult pause(PauseParams p) {
        String reason = p.getReason().length() > 500 ? p.getReason().substring(0, 500) : p.getReason();
        await(executor.pause(reason)); // durable before the answer (with a data folder)
        return PauseResult.newBuilder().setPaused(true).setReason(reason).build();
    }

    public PauseResult resume(PauseParams p) {
        await(executor.resume());
        String reason = p.getReason().length() > 500 ? p.getReason().substring(0, 500) : p.getReason();
        return PauseResult.newBuilder().setPaused(false).setReason(reason).build();
    }

    // ---- local automation ------------------------------------------------------------------------------
    public AutomationSetBlocksResult automationSetBlocks(AutomationSetBlocksParams p) {
        if (!p.getActor().equals("player") && !p.getActor().equals("environment") && !p.getActor().equals("external")) {
            throw McbException.invalid("actor must be \"player\", \"environment\" or \"external\", got '"
                    + p.getActor() + "'");
        }
        if (p.getBlocksCount() == 0) {
            throw McbException.invalid("blocks is empty");
        }
        if (p.getBlocksCount() > MAX_AUTOMATION_BLOCKS) {
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "at most " + MAX_AUTOMATION_BLOCKS + " blocks per call");
        }
        List<WorldReads.Write> writes = new ArrayList<>(p.getBlocksCount());
        for (AutomationBlock b : p.getBlocksList()) {
            writes.add(new WorldReads.Write(b.getX(), b.getY(), b.getZ(),
                    BatchExecutor.canonicalFull(world, b.getState())));
        }
        String player = p.getPlayerId().isEmpty() ? "console" : p.getPlayerId();
        Source source = switch (p.getActor()) {
            case "player" -> Source.PLAYER;
            case "environment" -> Source.ENVIRONMENT;
            default -> null; // external: written silently (no event), like a plugin without events
        };
        if (source != Source.PLAYER && !p.getPlayerName().isEmpty()) {
            throw McbException.invalid("player_name is for actor \"player\" only");
        }
        if (source != Source.ENVIRONMENT && !p.getCause().isEmpty()) {
            throw McbException.invalid("cause is for actor \"environment\" only");
        }
        Cause.checkPlayerName(p.getPlayerName());
        Observations.Who who = source == null ? null : source == Source.PLAYER
                ? new Observations.Who(source, player, p.getPlayerName().isEmpty() ? player : p.getPlayerName(), "")
                : new Observations.Who(source, "", "", Cause.check(p.getCause()));
        int changed = reads.automationWrite(writes, (x, y, z, before, after) -> {
            if (source == null) {
                revisions.bump(x >> 4, y >> 4, z >> 4);
            } else {
                recordForeign(x, y, z, before, after, who);
            }
        });
        return AutomationSetBlocksResult.newBuilder().setChanged(changed).build();
    }

    /** A player's context as set by automation_chat (tests; the platform did not know the player). */
    private record KnownContext(PlayerPosition position, TargetBlock targetBlock) {
    }

    private final Map<String, KnownContext> automationPlayers = new java.util.LinkedHashMap<>();

    public AutomationChatResult automationChat(AutomationChatParams p) {
        if (p.getPlayerId().isEmpty() || p.getText().isEmpty()) {
            throw McbException.invalid("automation_chat needs player_id and text");
        }
        PlayerPosition pos = p.hasPosition() ? p.getPosition() : null;
        TargetBlock target = p.hasTargetBlock() ? p.getTargetBlock() : null;
        if (pos == null && target == null) {
            KnownContext k;
            synchronized (automationPlayers) {
                k = automationPlayers.get(p.getPlayerId());
            }
            if (k != null) {
                pos = k.position();
                target = k.targetBlock();
            } else if (p.getText().length() <= ChatQueue.MAX_TEXT) {
                Optional<Players.PlayerView> v = onServer(() -> players.find(p.getPlayerId()));
                if (v.isPresent()) {
                    pos = position(v.get());
                    target = target(v.get());
                }
            }
        }
        ChatQueue.Message m = chat.submit(p.getPlayerId(), p.getText(), pos, target);
        if (p.hasPosition() || p.hasTargetBlock()) {
            synchronized (automationPlayers) {
                automationPlayers.put(p.getPlayerId(), new KnownContext(pos, target));
                while (automationPlayers.size() > 1000) {
                    automationPlayers.remove(automationPlayers.keySet().iterator().next());
                }
            }
        }
        return AutomationChatResult.newBuilder().setMessageId(m.messageId()).build();
    }

    public AutomationChatOutboxResult automationChatOutbox(AutomationChatOutboxParams p) {
        if (p.getPlayerId().isEmpty()) {
            throw McbException.invalid("automation_chat_outbox needs player_id");
        }
        return AutomationChatOutboxResult.newBuilder().addAllLines(chat.lines(p.getPlayerId())).build();
    }

    /**
     * {@code /ai <text>} typed in game (the adapter, on the server thread): queued with the player's
     * position, look and target block from the {@link Players} port.
     */
    public ChatQueue.Message chatFromServerThread(String playerId, String text) {
        return chatFromServerThread(playerId, text, true);
    }

    /** As above; {@code mayStopAll}: whether a {@code stop} pauses every write (see {@link ChatQueue#submit}). */
    public ChatQueue.Message chatFromServerThread(String playerId, String text, boolean mayStopAll) {
        Optional<Players.PlayerView> v = players.find(playerId);
        return chat.submit(playerId, text, v.map(WorldHostCore::position).orElse(null),
                v.map(WorldHostCore::target).orElse(null), mayStopAll);
    }

    // ---- chat for the AI bridge (scope: admin) ---------------------------------------------------------
    public ChatPollResult chatPoll(ChatPollParams p) {
        ChatQueue.Polled polled = chat.poll(p.getClientId(), p.getMaxMessages());
        ChatPollResult.Builder r = ChatPollResult.newBuilder().setTookOver(polled.tookOver());
        for (ChatQueue.Message m : polled.messages()) {
            ChatMessage.Builder b = ChatMessage.newBuilder().setId(m.messageId()).setPlayerId(m.playerId())
                    .setProjectId(m.projectId()).setText(m.text()).setType(m.kind().wire).setAtMillis(m.atMillis());
            if (m.position() != null) {
                b.setPosition(m.position());
            }
            if (m.targetBlock() != null) {
                b.setTargetBlock(m.targetBlock());
            }
            r.addMessages(b);
        }
        return r.build();
    }

    public ChatReplyResult chatReply(ChatReplyParams p) {
        boolean delivered = chat.reply(p.getClientId(), p.getId(), p.getPlayerId(), p.getText(), p.getDone(),
                p.getError());
        return ChatReplyResult.newBuilder().setDelivered(delivered).build();
    }

    // ---- player context and camera ---------------------------------------------------------------------
    static PlayerPosition position(Players.PlayerView v) {
        return PlayerPosition.newBuilder().setX(v.x()).setY(v.y()).setZ(v.z()).setYaw(v.yaw()).setPitch(v.pitch())
                .setWorld(v.world() == null ? "" : v.world()).build();
    }

    static TargetBlock target(Players.PlayerView v) {
        int[] t = v.targetBlock();
        if (t == null || t.length != 3) {
            return null;
        }
        return TargetBlock.newBuilder().setX(t[0]).setY(t[1]).setZ(t[2])
                .setState(v.targetState() == null ? "" : BatchExecutor.airNormalize(v.targetState())).build();
    }

    /**
     * player_context: an online player as the {@link Players} port sees them; otherwise the context
     * automation_chat set (tests); otherwise {@code online: false}.
     */
    public PlayerContextResult playerContext(PlayerContextParams p) {
        if (p.getPlayerId().isEmpty()) {
            throw McbException.invalid("player_context needs player_id");
        }
        PlayerContextResult.Builder r = PlayerContextResult.newBuilder().setPlayerId(p.getPlayerId());
        Optional<Players.PlayerView> v = playerContext(p.getPlayerId());
        if (v.isPresent()) {
            r.setOnline(true).setPosition(position(v.get()));
            TargetBlock t = target(v.get());
            if (t != null) {
                r.setTargetBlock(t);
            }
            return r.build();
        }
        KnownContext k;
        synchronized (automationPlayers) {
            k = automationPlayers.get(p.getPlayerId());
        }
        if (k != null) {
            r.setOnline(true);
            if (k.position() != null) {
                r.setPosition(k.position());
            }
            if (k.targetBlock() != null) {
                r.setTargetBlock(k.targetBlock());
            }
        }
        return r.build();
    }

    /** Position, look and target block of an online player, read on the server thread. */
    public Optional<Players.PlayerView> playerContext(String playerId) {
        return onServer(() -> players.find(playerId));
    }

    /** In-game plan previews (issue 32), set by the adapter with its client port before the server starts. */
    public void previews(Previews.Port port) {
        this.previews = new Previews(port, System::currentTimeMillis);
    }

    public Previews previews() {
        return previews;
    }

    /**
     * {@code chat_preview} (admin, the chat lease holder only): show a prepared plan to the player who asked,
     * as client-side blocks ({@link Previews}); {@code clear} restores their view. Nothing is written.
     */
    public ChatPreviewResult chatPreview(ChatPreviewParams p) {
        Previews pv = previews;
        if (!pv.supported()) {
            com.google.gson.JsonObject d = new com.google.gson.JsonObject();
            d.addProperty("reason", "no_previews");
            throw new McbException(ErrorCode.INVALID_REQUEST, "this world host has no players to show a plan to; "
                    + "use camera_capture with plan_id", d);
        }
        if (p.getPlayerId().isEmpty()) {
            throw McbException.invalid("chat_preview needs player_id");
        }
        String active = chat.activeClient();
        if (active == null || !active.equals(p.getClientId())) {
            throw new McbException(ErrorCode.PERMISSION_DENIED, "chat_preview: only the chat lease holder (the "
                    + "client_id that polls chat) may show previews");
        }
        if (p.getToggle()) {
            return onServer(() -> {
                ChatPreviewResult.Builder r = ChatPreviewResult.newBuilder().setOnline(pv.online(p.getPlayerId()));
                pv.toggle(p.getPlayerId()).ifPresent(v -> r.setShown(v.shown()).setBlocks(v.blocks().size()));
                return r.build();
            });
        }
        if (p.getClear()) {
            return onServer(() -> {
                pv.clear(p.getPlayerId(), p.getPlanId());
                return ChatPreviewResult.newBuilder().setOnline(pv.online(p.getPlayerId())).build();
            });
        }
        if (p.getPlanId().isEmpty()) {
            throw McbException.invalid("chat_preview needs plan_id (or clear)");
        }
        int n = p.getDesiredCount();
        if (p.getXyzCount() != 3 * n) {
            throw McbException.invalid("chat_preview: xyz must hold 3 ints per desired entry (" + p.getXyzCount()
                    + " for " + n + ")");
        }
        if (n > Previews.MAX_BLOCKS) {
            com.google.gson.JsonObject d = new com.google.gson.JsonObject();
            d.addProperty("limit", "preview_blocks");
            d.addProperty("max", Previews.MAX_BLOCKS);
            throw new McbException(ErrorCode.BUDGET_EXCEEDED, "a preview shows at most " + Previews.MAX_BLOCKS
                    + " blocks; this plan has " + n, d);
        }
        WorldDescriptor d = world.describe();
        List<Previews.Block> blocks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int idx = p.getDesired(i);
            if (idx >= p.getPaletteCount()) {
                throw McbException.invalid("chat_preview: desired[" + i + "] = " + idx + " is outside the palette ("
                        + p.getPaletteCount() + " states)");
            }
            int y = p.getXyz(3 * i + 1);
            if (y < d.minY() || y > d.maxY()) {
                throw McbException.invalid("chat_preview: y " + y + " is outside the world (" + d.minY() + ".."
                        + d.maxY() + ")");
            }
            String state = p.getPalette(idx);
            int brace = state.indexOf('{');
            blocks.add(new Previews.Block(p.getXyz(3 * i), y, p.getXyz(3 * i + 2),
                    brace < 0 ? state : state.substring(0, brace)));
        }
        return onServer(() -> {
            Previews.Preview v = pv.set(p.getPlayerId(), p.getPlanId(), blocks, p.getExpiresAtMillis(), p.getShow());
            return ChatPreviewResult.newBuilder().setOnline(pv.online(p.getPlayerId())).setShown(v.shown()).setBlocks(v.blocks().size()).build();
        });
    }

    /** The camera account (issue 17), set by the adapter from its configuration before the server starts. */
    public void cameraAccount(CameraAccount c) {
        this.camera = c;
    }

    /** {@code camera_account_pose}: rules in {@link CameraAccount}; the game calls on the server thread. */
    public CameraAccountPoseResult cameraAccountPose(CameraAccountPoseParams p) {
        return camera.pose(p, world.describe().worldName(), this::onServer);
    }

    static JsonArray xyz(int x, int y, int z) {
        JsonArray a = new JsonArray();
        a.add(x);
        a.add(y);
        a.add(z);
        return a;
    }
}
