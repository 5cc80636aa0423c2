//! Which of docs/semantics.md's rules a model reaches: what it uses, read off its IR, and a
//! table of rules, each with the uses that make it apply.

use crate::ir::{
    Expr, Flavour, Isolation, LockMode, Model, Op, OpKind, RedisCmd, SqlStmt, WaitPolicy,
};

/// What a model uses that some rule is about.
#[derive(Clone, Debug, Default)]
pub(crate) struct Uses {
    pub flavour: Option<Flavour>,
    /// Isolation levels its transactions can run at (the default, and every `BEGIN`'s).
    pub levels: Vec<Isolation>,
    pub sql: bool,
    pub plain_select: bool,
    pub locking_select: bool,
    pub share: bool,
    pub order_by: bool,
    pub nowait: bool,
    pub skip_locked: bool,
    pub update: bool,
    pub delete: bool,
    pub insert: bool,
    pub db_clock: bool,
    pub set_nx: bool,
    pub ttl: bool,
    pub del: bool,
    pub atomic: bool,
    pub await_: bool,
    pub pexpire: bool,
    pub pttl: bool,
    pub incr: bool,
    pub wait: bool,
    pub replica_read: bool,
    pub replicas: bool,
    pub failover: bool,
    pub clock_jump: bool,
    pub restart: bool,
    pub partition: bool,
    pub watchdog: bool,
    pub mutex: bool,
    pub crash: bool,
    pub timing_async: bool,
    pub liveness: bool,
    pub processes: usize,
    pub lock_timeout: bool,
    pub snapshot_isolation: bool,
    pub non_strict: bool,
}

impl Uses {
    /// What `m` uses, from its programs, servers, faults, settings and properties.
    pub(crate) fn of(m: &Model) -> Uses {
        let mut u = Uses {
            flavour: m.db.as_ref().map(|d| d.flavour),
            processes: m.processes.len(),
            timing_async: m.timing == crate::ir::Timing::Async,
            liveness: m.properties.iter().any(|p| p.kind.is_liveness()),
            replicas: m.redis.iter().any(|r| r.replicas > 0),
            mutex: !m.mutexes.is_empty(),
            ..Uses::default()
        };
        if let Some(db) = &m.db {
            u.levels.push(db.isolation);
            u.lock_timeout = db.settings.lock_timeout.is_some();
            u.snapshot_isolation = db.settings.innodb_snapshot_isolation;
            u.non_strict = db.settings.non_strict;
        }
        for op in m.groups.iter().flat_map(|g| &g.program.ops) {
            u.op(op);
        }
        for f in &m.faults {
            use crate::ir::FaultKind as F;
            match f.kind {
                F::Crash => u.crash = true,
                F::ClockJump { .. } => u.clock_jump = true,
                F::Restart { .. } => u.restart = true,
                F::Partition { .. } => u.partition = true,
                F::Failover { .. } => u.failover = true,
                F::Pause { .. } | F::Hang | F::Drift { .. } | F::LostReply => {}
            }
        }
        u.levels.sort();
        u.levels.dedup();
        u
    }

    fn op(&mut self, op: &Op) {
        match &op.kind {
            OpKind::Sql { stmt, .. } => {
                self.sql_stmt(stmt);
                stmt.exprs(&mut |e| e.visit(&mut |x| self.db_clock |= *x == Expr::Now));
            }
            OpKind::Redis { cmd, .. } => self.redis(cmd),
            OpKind::AwaitRedis { cmd, .. } => {
                self.await_ = true;
                self.redis(cmd);
            }
            OpKind::Atomic { body, .. } => {
                self.atomic = true;
                body.iter().for_each(|op| self.op(op));
            }
            OpKind::WatchdogStart { .. } => self.watchdog = true,
            OpKind::Lock { .. } | OpKind::Unlock { .. } => self.mutex = true,
            _ => {}
        }
    }

    fn sql_stmt(&mut self, stmt: &SqlStmt) {
        self.sql = true;
        match stmt {
            SqlStmt::Begin { isolation } => self.levels.extend(*isolation),
            SqlStmt::Select { lock, order, .. } => match lock {
                None => self.plain_select = true,
                Some(l) => {
                    self.locking_select = true;
                    self.order_by |= !order.is_empty();
                    self.share |= matches!(l.mode, LockMode::Share | LockMode::KeyShare);
                    self.nowait |= l.wait == WaitPolicy::NoWait;
                    self.skip_locked |= l.wait == WaitPolicy::SkipLocked;
                }
            },
            SqlStmt::Update { .. } => self.update = true,
            SqlStmt::Delete { .. } => self.delete = true,
            SqlStmt::Insert { .. } => self.insert = true,
            SqlStmt::Commit | SqlStmt::Rollback => {}
        }
    }

    fn redis(&mut self, cmd: &RedisCmd) {
        match cmd {
            RedisCmd::Set { nx, px, .. } => {
                self.set_nx |= *nx;
                self.ttl |= px.is_some();
            }
            RedisCmd::Del { .. } => self.del = true,
            RedisCmd::Pexpire { .. } => {
                self.pexpire = true;
                self.ttl = true;
            }
            RedisCmd::Pttl { .. } => self.pttl = true,
            RedisCmd::Incr { .. } => self.incr = true,
            RedisCmd::Wait { .. } => self.wait = true,
            RedisCmd::GetReplica { .. } => self.replica_read = true,
            RedisCmd::Get { .. } => {}
        }
    }

    fn pg(&self) -> bool {
        self.flavour == Some(Flavour::Postgres)
    }

    fn innodb(&self) -> bool {
        self.flavour.is_some_and(Flavour::innodb)
    }

    fn at(&self, level: Isolation) -> bool {
        self.levels.contains(&level)
    }

    /// Some transaction runs at READ COMMITTED or below (READ UNCOMMITTED locks as RC does, and
    /// is RC on PostgreSQL).
    fn read_committed(&self) -> bool {
        self.at(Isolation::ReadCommitted) || self.at(Isolation::ReadUncommitted)
    }

    /// Some statement takes row locks (a locking read, UPDATE, DELETE, INSERT).
    fn locks(&self) -> bool {
        self.locking_select || self.update || self.delete || self.insert
    }

    /// Some statement looks rows up to lock or change them.
    fn targets(&self) -> bool {
        self.locking_select || self.update || self.delete
    }

    /// Two or more processes take row locks: their waits can form a cycle.
    pub(crate) fn contends(&self) -> bool {
        self.locks() && self.processes > 1
    }
}

/// A rule: its ids in docs/semantics.md (`—` for one without an id), when it applies, and
/// what it says, in one sentence.
pub(crate) struct Rule {
    pub ids: &'static str,
    pub applies: fn(&Uses) -> bool,
    pub text: &'static str,
}

const fn rule(ids: &'static str, applies: fn(&Uses) -> bool, text: &'static str) -> Rule {
    Rule { ids, applies, text }
}

/// Every rule `explain` can name, in docs/semantics.md's order.
pub(crate) const RULES: &[Rule] = &[
    rule("PG-1, MY-1", |u| u.sql, "a transaction runs at the model's level (the flavour's default unless `isolation` says otherwise); a BEGIN may name another"),
    rule("PG-1", |u| u.pg() && u.at(Isolation::ReadUncommitted), "READ UNCOMMITTED is READ COMMITTED: PostgreSQL never shows another transaction's uncommitted data"),
    rule("PG-2", |u| u.pg() && u.read_committed(), "READ COMMITTED: each statement sees what was committed before it began, and its own writes"),
    rule("PG-3", |u| u.pg() && (u.at(Isolation::RepeatableRead) || u.at(Isolation::Serializable)), "REPEATABLE READ and SERIALIZABLE: one snapshot, taken at the first statement after BEGIN, not at BEGIN"),
    rule("MY-2", |u| u.innodb() && u.plain_select, "a plain SELECT is a consistent read: at READ COMMITTED a fresh snapshot each time, at REPEATABLE READ the first read's"),
    rule("MY-3", |u| u.innodb() && u.at(Isolation::ReadUncommitted), "READ UNCOMMITTED: a plain SELECT sees the newest version of each row, another transaction's uncommitted change included (a dirty read); locks as at READ COMMITTED"),
    rule("MY-5, MY-6", |u| u.innodb() && u.targets(), "locking reads, UPDATE and DELETE read the newest committed version, not the snapshot"),
    rule("MY-4", |u| u.innodb() && u.at(Isolation::Serializable) && u.plain_select, "SERIALIZABLE: a plain SELECT inside a transaction becomes FOR SHARE; an autocommit one stays a consistent read"),
    rule("PG-27", |u| u.pg() && u.sql, "any error aborts the transaction and releases its locks; later statements fail with 25P02 until ROLLBACK"),
    rule("MY-19, MY-20", |u| u.innodb() && u.sql, "a deadlock (1213) rolls back the whole transaction; a lock wait timeout (1205), NOWAIT, 1264 or 1062 only the statement"),
    rule("PG-5, PG-6", |u| u.pg() && u.locks(), "row locks FOR UPDATE, NO KEY UPDATE, SHARE and KEY SHARE conflict as documented; UPDATE takes NO KEY UPDATE unless it changes the key, DELETE FOR UPDATE"),
    rule("MY-9", |u| u.innodb() && u.locks(), "row locks are S (FOR SHARE, LOCK IN SHARE MODE) or X (FOR UPDATE, UPDATE, DELETE, INSERT)"),
    rule("PG-10", |u| u.pg() && u.locking_select, "a locking SELECT locks exactly the rows it returns, whatever the indexes; with LIMIT it stops once it has enough"),
    rule("PG-16, PG-17", |u| u.pg() && u.targets() && u.read_committed(), "READ COMMITTED: a locked target row is waited for, then its WHERE is checked again on the newest version (EvalPlanQual); rows that did not match the snapshot are never considered"),
    rule("PG-11", |u| u.pg() && u.order_by, "with ORDER BY, the candidates are sorted before they are locked"),
    rule("PG-21, PG-22", |u| u.pg() && u.targets() && (u.at(Isolation::RepeatableRead) || u.at(Isolation::Serializable)), "REPEATABLE READ and SERIALIZABLE: a target row changed by a transaction that committed after the snapshot fails with 40001"),
    rule("MY-12, MY-13", |u| u.innodb() && u.targets(), "every index record a statement scans is locked: a primary-key or indexed equality reaches its rows only, anything else scans and locks every row"),
    rule("MY-14", |u| u.innodb() && u.targets() && u.read_committed(), "READ COMMITTED: rows that do not match are unlocked once the WHERE is evaluated; UPDATE and DELETE read a locked row's committed version first (semi-consistent read)"),
    rule("MY-10, MY-11, MY-16", |u| u.innodb() && u.locks() && (u.at(Isolation::RepeatableRead) || u.at(Isolation::Serializable)), "REPEATABLE READ: a locking scan locks the gaps it passes too; an INSERT into a gap another transaction holds waits"),
    rule("PG-13", |u| u.pg() && u.nowait, "NOWAIT: a row another transaction holds fails the statement at once with 55P03, aborting the transaction"),
    rule("MY-18", |u| u.flavour == Some(Flavour::Mysql) && u.nowait, "NOWAIT: a row another transaction holds fails the statement at once with 3572 (the statement only)"),
    rule("§12", |u| u.flavour == Some(Flavour::Mariadb) && u.nowait, "NOWAIT: MariaDB fails the statement at once with 1205 (the statement only)"),
    rule("PG-14, MY-18", |u| u.skip_locked, "SKIP LOCKED: a row that cannot be locked at once is left out, and does not count toward LIMIT"),
    rule("PG-32", |u| u.pg() && u.update, "UPDATE's row count is the rows it matched"),
    rule("MY-24", |u| u.innodb() && u.update, "UPDATE's row count is the rows it changed: a row set to the value it has does not count"),
    rule("PG-34", |u| u.pg() && (u.update || u.insert), "integers never wrap: a value out of the column's range fails with 22003"),
    rule("PG-35, MY-16", |u| u.insert && u.contends(), "an INSERT of an existing key: InnoDB waits for any lock on the row, then fails with 1062; PostgreSQL waits only for a transaction that changed the row, and fails with 23505 at once past a mere lock"),
    rule("MY-26", |u| u.innodb() && (u.update || u.insert) && !u.non_strict, "integers never wrap: in strict mode (the default `sql_mode`) a value out of range fails with 1264"),
    rule("MY-26", |u| u.innodb() && (u.update || u.insert) && u.non_strict, "with `sql_mode = ''` a value out of range is clipped to the column's limit, with warning 1264"),
    rule("§12", |u| u.flavour == Some(Flavour::Mariadb) && u.snapshot_isolation, "`innodb_snapshot_isolation = on`: at REPEATABLE READ, an UPDATE or DELETE of a row changed since the snapshot fails with 1020"),
    rule("PG-33, MY-25", |u| u.db_clock, "now(): PostgreSQL the start of the transaction, to the microsecond; InnoDB the start of the statement, whole seconds without a precision"),
    rule("—", |u| u.insert, "an INSERT of a key another transaction changed but has not committed waits for it; of a live key it fails (23505, 1062)"),
    rule("MY-20, MY-21", |u| u.innodb() && u.contends(), "a wait that would close a cycle is a deadlock at once: the lightest transaction (rows changed plus locked) is rolled back with 1213"),
    rule("MY-20", |u| u.innodb() && u.contends(), "a lock wait ends after `innodb_lock_wait_timeout` (50 s unless set) with 1205"),
    rule("PG-28, PG-29", |u| u.pg() && u.contends(), "a waiter checks for a deadlock `deadlock_timeout` (1 s unless set) after its wait began, and aborts its own transaction with 40P01 if it is on a cycle"),
    rule("PG-28", |u| u.pg() && u.lock_timeout, "`lock_timeout` ends a wait with 55P03 and aborts the transaction"),
    rule("PG-26", |u| u.pg() && u.at(Isolation::Serializable), "SERIALIZABLE (conservative SSI): a transaction that wrote fails at COMMIT with 40001 when a row or table it read was changed by a later commit; reads never block"),
    rule("RS-1", |u| u.set_nx, "SET … NX sets the key only when it is absent (reply OK, else nil); a successful SET replaces any old TTL"),
    rule("RS-2", |u| u.ttl, "a key is there up to and at its expiry time, gone 1 ms after it"),
    rule("RS-3", |u| u.clock_jump, "a server compares deadlines with its own clock: a jump forward expires its keys that much earlier, one back keeps them longer; a replica's clock applies to its copies"),
    rule("RL-2, RL-4", |u| u.partition, "a partitioned server is unreachable: a command times out with no effect, except the one in flight when the path broke, which takes effect and loses its reply"),
    rule("RF-6, RL-6", |u| u.restart, "a restart without persistence empties the server and its replicas: locks vanish and their holders are not told; kept down a while (`down D`), it refuses connections meanwhile"),
    rule("RS-6", |u| u.del, "DEL removes whatever the key holds: it checks no ownership"),
    rule("RS-7, RS-8", |u| u.atomic, "an `atomic` block is one script: no other command runs and no key expires during it (the safe release checks the token inside one)"),
    rule("RS-4", |u| u.pexpire, "PEXPIRE sets or refreshes the TTL of an existing key (1) and does nothing to a missing one (0)"),
    rule("RS-5", |u| u.pttl, "PTTL replies the milliseconds left, −1 for a key without a TTL, −2 for a missing key"),
    rule("RS-4, RS-10", |u| u.incr, "INCR adds one to an integer (a missing key counts as 0) and keeps the key's TTL"),
    rule("—", |u| u.await_, "`await CMD` retries the command until its reply is truthy: one failed attempt, then the process waits until it would succeed"),
    rule("—", |u| u.mutex, "a mutex has a copy per service instance; it is not re-entrant and grants in FIFO order"),
    rule("RF-1", |u| u.replicas, "replication is asynchronous: a replica applies the primary's writes in order, each at a moment the environment chooses"),
    rule("RF-2, RF-4", |u| u.failover, "a failover promotes any live replica; the writes it had not applied are lost, and clients follow the new primary"),
    rule("RF-4", |u| u.wait, "WAIT n t replies once n replicas have every write so far, or after t, with how many have"),
    rule("RF-5", |u| u.replica_read, "a read on a replica sees its own copy, which may lag, and treats a key expired by its clock as absent"),
    rule("WD-1, WD-3, WD-4", |u| u.watchdog, "the watchdog renews every lease/3 while the key still holds $me (else it stops); it stands still in a pause and dies with a crash"),
    rule("—", |u| u.crash, "a crash takes down the process's instance: transactions roll back, row locks go, mutexes vanish; Redis keys stay until their TTL"),
    rule("MK", |u| u.timing_async, "`timing async`: time may pass between any two steps, so any process may be delayed for any time"),
    rule("—", |u| u.liveness, "liveness is judged on fair runs of the complete graph, with no reduction; faults are never forced"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every id a rule cites is one docs/semantics.md uses, so a reader finds it there.
    #[test]
    fn every_rule_id_is_in_the_semantics() {
        let doc = include_str!("../../docs/semantics.md");
        for r in RULES {
            for id in r.ids.split(", ").filter(|id| *id != "—") {
                let cited = doc.match_indices(id).any(|(i, _)| {
                    let next = doc[i + id.len()..].chars().next();
                    !next.is_some_and(|c| c.is_ascii_digit())
                });
                assert!(cited, "{id} is not in docs/semantics.md");
            }
            assert!(r.text.chars().count() <= 200, "{}: one sentence", r.ids);
        }
    }

    /// A model with none of the features names no rule; one feature names its rule.
    #[test]
    fn a_rule_applies_only_when_the_model_uses_it() {
        let none = Uses::default();
        assert_eq!(RULES.iter().filter(|r| (r.applies)(&none)).count(), 0);
        let nx = Uses {
            set_nx: true,
            ..Uses::default()
        };
        let ids: Vec<&str> = RULES
            .iter()
            .filter(|r| (r.applies)(&nx))
            .map(|r| r.ids)
            .collect();
        assert_eq!(ids, ["RS-1"]);
    }
}
