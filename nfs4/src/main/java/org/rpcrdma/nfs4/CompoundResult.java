package org.rpcrdma.nfs4;

import java.util.Collections;
import java.util.List;

/**
 * A decoded COMPOUND4res: the overall status, and the result of each operation that ran.
 * {@link #get(Op)} gives an operation's result or throws {@link Nfs4Exception} naming
 * the status that stopped the compound.
 */
public final class CompoundResult {
    private final Compound compound;
    private final int status;
    private final String tag;
    private final List<Object> results;
    private final int[] statuses;

    CompoundResult(Compound compound, int status, String tag, List<Object> results, int[] statuses) {
        this.compound = compound;
        this.status = status;
        this.tag = tag;
        this.results = Collections.unmodifiableList(results);
        this.statuses = statuses;
    }

    /** The COMPOUND's nfsstat4: that of the last operation run (RFC 8881 §16.2.3). */
    public int status() {
        return status;
    }

    public String tag() {
        return tag;
    }

    /** How many operations ran (have a result). */
    public int count() {
        return statuses.length;
    }

    /** The status of operation {@code i}. */
    public int status(int i) {
        return statuses[i];
    }

    /** The operation that failed, or null if all succeeded. */
    public Op<?> failedOp() {
        return status == Nfs4.NFS4_OK ? null
                : statuses.length == 0 ? compound.ops().get(0) : compound.ops().get(statuses.length - 1);
    }

    /** Throws {@link Nfs4Exception} unless every operation succeeded. */
    public CompoundResult check() {
        if (status != Nfs4.NFS4_OK) {
            Op<?> op = failedOp();
            throw new Nfs4Exception(status, op.code(), "COMPOUND " + compound.ops() + " at " + op);
        }
        return this;
    }

    /**
     * The result of {@code op} (this very instance in the compound).
     *
     * @throws Nfs4Exception if the compound stopped at or before it
     */
    @SuppressWarnings("unchecked")
    public <R> R get(Op<R> op) {
        int i = compound.ops().indexOf(op);
        if (i < 0) {
            throw new IllegalArgumentException(op + " is not in this COMPOUND");
        }
        if (i >= results.size() || statuses[i] != Nfs4.NFS4_OK) {
            Op<?> f = failedOp();
            throw new Nfs4Exception(status, f.code(), "no result for " + op + ": COMPOUND stopped at " + f);
        }
        return (R) results.get(i);
    }
}
