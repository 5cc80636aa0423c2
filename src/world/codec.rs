//! The compact binary form of a state, for the visited set and the frontier: each field in
//! declaration order (but the state's database last), integers as variable-length (LEB128, signed ones zig-zagged), enums as
//! a tag byte, options and lists with a tag or length in front. A process has, after its
//! position, status and locals, a bit set of the fields that are off their default, and only
//! those follow: a process at rest packs into about seven bytes. Each process of a state is
//! preceded by its length, so that its bytes can be taken or passed over without decoding
//! it (the unpacker's cache and the fingerprint search's queue, `split`).
//!
//! Written for the search's hot path: a state is packed once per transition and unpacked
//! once per expansion, and a general serialisation framework spent much of the search's time
//! there (docs/explorer.md). Every struct lists its fields once (`pack_struct!`), in a struct
//! literal, and `Proc` names all its fields in a pattern, so a field added to a world type
//! and not here is a compile error.

use super::db::{Db, Gap, GapRange, Row, RowLocks};
use super::lock::Lock;
use super::process::{Proc, RunError, Status, Txn, Wait, Watchdog};
use super::redis::{Key, Off, Redis, Write};
use super::shared::{ByAddr, Shared};
use crate::ir::value::{Pid, Sym, Value};
use super::State;
use crate::ir::{Isolation, LockMode};
use std::hash::Hasher as _;
use std::ops::Range;

/// A part of a state that packs into bytes and back.
pub trait Pack: Sized {
    /// Appends the encoding of `self` to `out`.
    fn put(&self, out: &mut Vec<u8>);
    /// Reads one value back; the bytes must have come from [`Pack::put`].
    fn take(r: &mut Reader<'_>) -> Self;
}

/// A state packed on its own.
#[must_use]
pub fn pack(s: &State) -> Box<[u8]> {
    let mut out = Vec::with_capacity(64);
    s.put(&mut out);
    out.into_boxed_slice()
}

/// The state `bytes` holds (as packed by [`pack`] or [`Packer::pack_into`]).
///
/// # Panics
/// If the bytes are not a packed state: the search only unpacks what it packed.
#[must_use]
pub fn unpack(bytes: &[u8]) -> State {
    whole(bytes)
}

/// The bytes still to read.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self
            .bytes
            .split_first()
            .expect("a packed state is complete");
        self.bytes = rest;
        b
    }

    /// The bytes of a part written by [`put_sized`], which the reader moves past.
    #[inline]
    fn sized(&mut self) -> &'a [u8] {
        let len = usize::try_from(self.varint()).expect("a part's length fits");
        let (part, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        part
    }

    #[inline(always)]
    fn varint(&mut self) -> u64 {
        // Most numbers in a state are small: one byte.
        let b = self.byte();
        if b < 0x80 {
            return u64::from(b);
        }
        self.varint_rest(b)
    }

    fn varint_rest(&mut self, first: u8) -> u64 {
        let (mut v, mut shift) = (u64::from(first & 0x7f), 7);
        loop {
            let b = self.byte();
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    }
}

/// The value `bytes` holds, all of them.
fn whole<T: Pack>(bytes: &[u8]) -> T {
    let mut r = Reader { bytes };
    let v = T::take(&mut r);
    assert!(r.bytes.is_empty(), "a packed part has no trailing bytes");
    v
}

/// Reads the variable-length number at the start of `bytes`: its value and its length.
///
/// # Panics
/// If `bytes` ends inside the number.
#[must_use]
#[inline]
pub fn read_varint(bytes: &[u8]) -> (u64, usize) {
    let mut r = Reader { bytes };
    let v = r.varint();
    (v, bytes.len() - r.bytes.len())
}

/// Appends `v` as a variable-length number (LEB128).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

impl Pack for u8 {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self);
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        r.byte()
    }
}

impl Pack for bool {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        r.byte() != 0
    }
}

macro_rules! pack_unsigned {
    ($($t:ty),*) => {$(
        impl Pack for $t {
            #[inline]
            fn put(&self, out: &mut Vec<u8>) {
                put_varint(out, u64::from(*self));
            }
            #[inline]
            fn take(r: &mut Reader<'_>) -> Self {
                r.varint() as $t
            }
        }
    )*};
}
pack_unsigned!(u16, u32);

macro_rules! pack_signed {
    ($($t:ty),*) => {$(
        impl Pack for $t {
            #[inline]
            fn put(&self, out: &mut Vec<u8>) {
                put_varint(out, zigzag(i64::from(*self)));
            }
            #[inline]
            fn take(r: &mut Reader<'_>) -> Self {
                unzigzag(r.varint()) as $t
            }
        }
    )*};
}
pack_signed!(i32, i64);

impl<T: Pack> Pack for Option<T> {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                v.put(out);
            }
        }
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        (r.byte() != 0).then(|| T::take(r))
    }
}

/// A list: its length, then its items.
#[inline]
fn put_list<T: Pack>(items: &[T], out: &mut Vec<u8>) {
    put_varint(out, items.len() as u64);
    for v in items {
        v.put(out);
    }
}

impl<T: Pack> Pack for Vec<T> {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        put_list(self, out);
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        let n = r.varint() as usize;
        (0..n).map(|_| T::take(r)).collect()
    }
}

impl<T: Pack> Pack for Box<[T]> {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        put_list(self, out);
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        Vec::take(r).into_boxed_slice()
    }
}

impl<A: Pack, B: Pack> Pack for (A, B) {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        let a = A::take(r);
        (a, B::take(r))
    }
}

/// A struct, field by field. The struct literal in `take` makes the list complete.
macro_rules! pack_struct {
    ($t:ident { $($f:ident),* $(,)? }) => {
        impl Pack for $t {
            #[inline]
            fn put(&self, out: &mut Vec<u8>) {
                $(self.$f.put(out);)*
            }
            #[inline]
            fn take(r: &mut Reader<'_>) -> Self {
                $t { $($f: Pack::take(r)),* }
            }
        }
    };
}

/// An enum without data, as its discriminant. The match in `put` makes the list complete.
macro_rules! pack_unit_enum {
    ($t:ident { $($v:ident),* $(,)? }) => {
        impl Pack for $t {
            #[inline]
            fn put(&self, out: &mut Vec<u8>) {
                out.push(match self { $($t::$v => $t::$v as u8),* });
            }
            #[inline]
            fn take(r: &mut Reader<'_>) -> Self {
                let b = r.byte();
                [$($t::$v),*]
                    .into_iter()
                    .find(|&v| v as u8 == b)
                    .expect(concat!("a packed ", stringify!($t), " is one of its variants"))
            }
        }
    };
}

/// A one-field tuple struct, as its field.
macro_rules! pack_newtype {
    ($($t:ident($inner:ty)),* $(,)?) => {$(
        impl Pack for $t {
            #[inline]
            fn put(&self, out: &mut Vec<u8>) {
                self.0.put(out);
            }
            #[inline]
            fn take(r: &mut Reader<'_>) -> Self {
                $t(<$inner>::take(r))
            }
        }
    )*};
}
pack_newtype!(Sym(u32), Pid(u16));

impl<T: Pack> Pack for Shared<T> {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        (**self).put(out);
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        Shared::new(T::take(r))
    }
}

/// A variant of an enum with data: its tag, then its fields (a pair for two).
#[inline]
fn put_tagged(out: &mut Vec<u8>, tag: u8, fields: &impl Pack) {
    out.push(tag);
    fields.put(out);
}

impl Pack for Value {
    // Forced: the most frequent call of packing, and not inlined otherwise.
    #[inline(always)]
    fn put(&self, out: &mut Vec<u8>) {
        match *self {
            Value::Nil => out.push(0),
            Value::Bool(b) => out.push(1 + u8::from(b)),
            Value::Int(i) => put_tagged(out, 3, &i),
            Value::Str(s) => put_tagged(out, 4, &s),
            Value::Pid(p) => put_tagged(out, 5, &p),
        }
    }
    #[inline(always)]
    fn take(r: &mut Reader<'_>) -> Self {
        match r.byte() {
            0 => Value::Nil,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => Value::Int(i64::take(r)),
            4 => Value::Str(Sym::take(r)),
            5 => Value::Pid(Pid::take(r)),
            t => panic!("no value has tag {t}"),
        }
    }
}

pack_unit_enum!(Isolation {
    ReadCommitted,
    RepeatableRead,
    Serializable,
    ReadUncommitted
});
pack_unit_enum!(LockMode {
    Update,
    NoKeyUpdate,
    Share,
    KeyShare
});
pack_unit_enum!(RunError {
    Type,
    DivideByZero,
    Overflow,
    UnlockNotHeld,
    Relock,
    KeyUpdate,
    BadDelay
});

impl Pack for Status {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Status::Ready => out.push(0),
            Status::Busy(t) => put_tagged(out, 1, t),
            Status::Waiting(w) => put_tagged(out, 2, w),
            Status::Done(o) => put_tagged(out, 3, o),
            Status::Errored(code) => put_tagged(out, 4, code),
            Status::Crashed => out.push(5),
            Status::Hung => out.push(6),
            Status::Failed(e) => put_tagged(out, 7, e),
        }
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        match r.byte() {
            0 => Status::Ready,
            1 => Status::Busy(Pack::take(r)),
            2 => Status::Waiting(Pack::take(r)),
            3 => Status::Done(Pack::take(r)),
            4 => Status::Errored(Pack::take(r)),
            5 => Status::Crashed,
            6 => Status::Hung,
            7 => Status::Failed(Pack::take(r)),
            t => panic!("no status has tag {t}"),
        }
    }
}

impl Pack for Wait {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Wait::Mutex(l) => put_tagged(out, 0, l),
            Wait::Row { table, key, mode } => put_tagged(out, 1, &(*table, (*key, *mode))),
            Wait::Gap { table, key } => put_tagged(out, 2, &(*table, *key)),
            Wait::Replicas { server, need } => put_tagged(out, 3, &(*server, *need)),
            Wait::Await { key } => put_tagged(out, 4, key),
        }
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        match r.byte() {
            0 => Wait::Mutex(Pack::take(r)),
            1 => Wait::Row {
                table: Pack::take(r),
                key: Pack::take(r),
                mode: Pack::take(r),
            },
            2 => Wait::Gap {
                table: Pack::take(r),
                key: Pack::take(r),
            },
            3 => Wait::Replicas {
                server: Pack::take(r),
                need: Pack::take(r),
            },
            4 => Wait::Await { key: Pack::take(r) },
            t => panic!("no wait has tag {t}"),
        }
    }
}

impl Pack for GapRange {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            GapRange::All => out.push(0),
            GapRange::Between(lo, hi) => put_tagged(out, 1, &(*lo, *hi)),
            GapRange::Value { column, value } => put_tagged(out, 2, &(*column, *value)),
        }
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        match r.byte() {
            0 => GapRange::All,
            1 => {
                let lo = Pack::take(r);
                GapRange::Between(lo, Pack::take(r))
            }
            2 => GapRange::Value {
                column: Pack::take(r),
                value: Pack::take(r),
            },
            t => panic!("no gap range has tag {t}"),
        }
    }
}

pack_struct!(Txn {
    isolation,
    explicit,
    snapshot,
    aborted,
    weight,
    started
});
pack_struct!(Watchdog {
    key,
    lease,
    next_in
});
/// A process: where it is, its status and locals, then a bit set of the fields that differ
/// from a fresh process's (most are `None` most of the time) and only those.
impl Pack for Proc {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        // Named in full (no `..`): a new field is a compile error here until it is packed.
        let Proc {
            pc,
            status,
            locals,
            txn,
            candidates,
            error,
            check_in,
            timeout_in,
            paused,
            slack,
            drift,
            lose_reply,
            last_write,
            watchdog,
            reads,
        } = self;
        pc.put(out);
        status.put(out);
        locals.put(out);
        let bits = u16::from(txn.is_some())
            | u16::from(candidates.is_some()) << 1
            | u16::from(error.is_some()) << 2
            | u16::from(check_in.is_some()) << 3
            | u16::from(timeout_in.is_some()) << 4
            | u16::from(paused.is_some()) << 5
            | u16::from(*slack != 0) << 6
            | u16::from(*drift != 0) << 7
            | u16::from(*lose_reply) << 8
            | u16::from(last_write.is_some()) << 9
            | u16::from(watchdog.is_some()) << 10
            | u16::from(!reads.is_empty()) << 11;
        bits.put(out);
        if bits == 0 {
            return;
        }
        txn.put_inner(out);
        candidates.put_inner(out);
        error.put_inner(out);
        check_in.put_inner(out);
        timeout_in.put_inner(out);
        paused.put_inner(out);
        if *slack != 0 {
            slack.put(out);
        }
        if *drift != 0 {
            drift.put(out);
        }
        last_write.put_inner(out);
        watchdog.put_inner(out);
        if !reads.is_empty() {
            reads.put(out);
        }
    }

    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        let pc = Pack::take(r);
        let status = Pack::take(r);
        let locals = Pack::take(r);
        let mut p = Proc {
            pc,
            status,
            locals,
            ..Proc::new(0)
        };
        let bits = u16::take(r);
        if bits == 0 {
            return p;
        }
        let some = |i: usize| bits & (1 << i) != 0;
        p.txn = some(0).then(|| Pack::take(r));
        p.candidates = some(1).then(|| Pack::take(r));
        p.error = some(2).then(|| Pack::take(r));
        p.check_in = some(3).then(|| Pack::take(r));
        p.timeout_in = some(4).then(|| Pack::take(r));
        p.paused = some(5).then(|| Pack::take(r));
        if some(6) {
            p.slack = Pack::take(r);
        }
        if some(7) {
            p.drift = Pack::take(r);
        }
        p.lose_reply = some(8);
        p.last_write = some(9).then(|| Pack::take(r));
        p.watchdog = some(10).then(|| Pack::take(r));
        if some(11) {
            p.reads = Pack::take(r);
        }
        p
    }
}

/// Puts the value of an option, if it has one (its presence is in a bit set).
trait PutInner {
    fn put_inner(&self, out: &mut Vec<u8>);
}

impl<T: Pack> PutInner for Option<T> {
    #[inline]
    fn put_inner(&self, out: &mut Vec<u8>) {
        if let Some(v) = self {
            v.put(out);
        }
    }
}

pack_struct!(RowLocks { held, queue });
pack_struct!(Row {
    key,
    versions,
    pending,
    locks
});
pack_struct!(Gap {
    table,
    owner,
    range
});
pack_struct!(Db { tables, seq, gaps });
pack_struct!(Key { name, value, ttl });
pack_struct!(Write { key, state });
pack_struct!(Redis {
    keys,
    backlog,
    down,
    skew,
    off
});

impl Pack for Off {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Off::On => out.push(0),
            Off::InFlight(t) => put_tagged(out, 1, t),
            Off::Cut(t) => put_tagged(out, 2, t),
            Off::Down(t) => put_tagged(out, 3, t),
        }
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        match r.byte() {
            0 => Off::On,
            1 => Off::InFlight(Pack::take(r)),
            2 => Off::Cut(Pack::take(r)),
            3 => Off::Down(Pack::take(r)),
            t => panic!("no reachability has tag {t}"),
        }
    }
}
pack_struct!(Lock { holder, queue });
/// The processes, the rest of the world, the database last: its bytes are the rest of the
/// state's, which `Unpacker` uses.
impl Pack for State {
    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        put_varint(out, self.procs.len() as u64);
        for p in &self.procs {
            put_sized(p, out);
        }
        self.put_world(out);
        self.db.put(out);
    }
    #[inline]
    fn take(r: &mut Reader<'_>) -> Self {
        State::take_with(r, &mut |bytes: &[u8]| whole(bytes), &mut |r| Pack::take(r))
    }
}

impl State {
    /// Packs what lies between the processes and the database: `State::rest`, which names
    /// every field, so that a new one is a compile error there until it is placed.
    #[inline]
    fn put_world(&self, out: &mut Vec<u8>) {
        let (redis, primary, epochs, mutexes, ghosts, faults_used, clock) = self.rest();
        put_list(redis, out);
        put_list(primary, out);
        put_list(epochs, out);
        put_list(mutexes, out);
        put_list(ghosts, out);
        put_list(faults_used, out);
        clock.put(out);
    }

    /// Reads a state as [`Pack::put`] writes it, each process from its bytes by `proc` and
    /// the database by `db`.
    #[inline]
    fn take_with(
        r: &mut Reader<'_>,
        proc: &mut dyn FnMut(&[u8]) -> Shared<Proc>,
        db: &mut dyn FnMut(&mut Reader<'_>) -> Shared<Db>,
    ) -> Self {
        let n = r.varint() as usize;
        // Fields are read in the order written here, which is the packing order.
        State {
            procs: (0..n).map(|_| proc(r.sized())).collect(),
            redis: Pack::take(r),
            primary: Pack::take(r),
            epochs: Pack::take(r),
            mutexes: Pack::take(r),
            ghosts: Pack::take(r),
            faults_used: Pack::take(r),
            clock: Pack::take(r),
            db: db(r),
        }
    }
}

/// Packs states for one thread, copying the bytes of a process or database it packed lately
/// (the very same shared value) instead of packing it again: the successors of a state share
/// all but one or two of its processes, and most share its database. The bytes are
/// [`pack`]'s, byte for byte.
#[derive(Default)]
pub struct Packer {
    /// Processes packed lately, by identity, with where their bytes lie in `bytes`. (A slot
    /// for the process at each place kept too few: a successor's changed
    /// process is one the step memo hands out again and again, at any place.)
    procs: ByAddr<Proc, Range<usize>>,
    /// Databases packed lately, the same way, with their bytes in `db_bytes`.
    dbs: ByAddr<Db, Range<usize>>,
    db_bytes: Vec<u8>,
    bytes: Vec<u8>,
}

/// Slots of [`Packer::procs`] and of [`Packer::dbs`]. (256 process slots were too few for
/// what recurs: whether two frequent processes shared a slot depended on where the allocator
/// put them, and one run packed four times as many processes as another.)
const PACKED_PROCS: usize = 1024;
const PACKED_DBS: usize = 16;

impl Packer {
    /// Appends the packed state to `out`: the bytes [`pack`] returns.
    #[inline]
    pub fn pack_into(&mut self, s: &State, out: &mut Vec<u8>) {
        out.reserve(16 + 24 * s.procs.len());
        if s.procs.len() < 3 {
            // Copying one process of two saves less than the bookkeeping costs.
            s.put(out);
            return;
        }
        put_varint(out, s.procs.len() as u64);
        for p in &s.procs {
            copy_or_put(
                &mut self.procs,
                PACKED_PROCS,
                &mut self.bytes,
                p,
                out,
                put_sized,
            );
        }
        s.put_world(out);
        let put = |db: &Shared<Db>, out: &mut Vec<u8>| db.put(out);
        copy_or_put(
            &mut self.dbs,
            PACKED_DBS,
            &mut self.db_bytes,
            &s.db,
            out,
            put,
        );
    }
}

/// Appends the bytes of `v` to `out`: copied from `bytes` when `known` holds `v` itself,
/// else packed and remembered there.
#[inline]
fn copy_or_put<T: Pack>(
    known: &mut ByAddr<T, Range<usize>>,
    slots: usize,
    bytes: &mut Vec<u8>,
    v: &Shared<T>,
    out: &mut Vec<u8>,
    put: impl Fn(&Shared<T>, &mut Vec<u8>),
) {
    known.size(slots);
    if bytes.len() > 128 * slots {
        // Stale bytes pile up behind the values replaced: start again.
        known.clear();
        bytes.clear();
    }
    if let Some(at) = known.get(v) {
        out.extend_from_slice(&bytes[at.clone()]);
        return;
    }
    let start = out.len();
    put(v, out);
    let at = bytes.len()..bytes.len() + out.len() - start;
    bytes.extend_from_slice(&out[start..]);
    known.put(v, at);
}

/// Unpacks states for one thread, sharing the processes and databases of the states it
/// unpacked lately instead of decoding and allocating them again: a layer of a search holds
/// many states but few distinct processes or databases.
pub struct Unpacker {
    procs: Cache<Proc>,
    db: Cache<Db>,
}

impl Unpacker {
    /// An unpacker for about `states` states: its caches have as many slots, from 16 to
    /// 1,024 (a small search does not pay for large ones).
    #[must_use]
    pub fn for_states(states: usize) -> Self {
        let slots = Self::slots_for(states);
        Unpacker {
            procs: Cache::new(slots),
            db: Cache::new(slots),
        }
    }

    /// How many slots each cache of an unpacker for about `states` states has.
    #[must_use]
    pub fn slots_for(states: usize) -> usize {
        states.clamp(16, MAX_SLOTS).next_power_of_two()
    }

    /// [`unpack`], sharing parts with the states unpacked before.
    ///
    /// # Panics
    /// If the bytes are not a packed state.
    #[must_use]
    pub fn unpack(&mut self, bytes: &[u8]) -> State {
        let mut r = Reader { bytes };
        let Unpacker { procs, db } = self;
        let s = State::take_with(
            &mut r,
            &mut |bytes| procs.get(bytes),
            // The database comes last: its bytes are all that is left.
            &mut |r| db.get(std::mem::take(&mut r.bytes)),
        );
        assert!(r.bytes.is_empty(), "a packed state has no trailing bytes");
        s
    }
}

/// Parts recently decoded, by their bytes: one per slot, the slot chosen by a hash.
struct Cache<T> {
    slots: Box<[Slot<T>]>,
}

/// A part's bytes and the part.
type Slot<T> = Option<(Box<[u8]>, Shared<T>)>;

const MAX_SLOTS: usize = 1024;
/// Parts whose bytes are longer are not kept (a process at rest takes about seven bytes).
const CACHED_BYTES: usize = 64;

impl<T: Pack> Cache<T> {
    fn new(slots: usize) -> Self {
        Cache {
            slots: (0..slots).map(|_| None).collect(),
        }
    }

    /// The part `bytes` holds (all of them).
    fn get(&mut self, bytes: &[u8]) -> Shared<T> {
        let mut h = rustc_hash::FxHasher::default();
        h.write(bytes);
        let n = self.slots.len();
        let slot = &mut self.slots[(h.finish() >> 32) as usize % n];
        if let Some((known, part)) = slot {
            if **known == *bytes {
                return part.clone();
            }
        }
        let part = Shared::new(whole::<T>(bytes));
        if bytes.len() <= CACHED_BYTES {
            *slot = Some((bytes.into(), part.clone()));
        }
        part
    }
}

/// Where the parts of the packed state `bytes` end, into `ends`: the process count first,
/// then each process, then the rest (the world and the database, which [`Pack::put`] writes
/// after the processes). The parts lie one after another from the start.
pub fn split(bytes: &[u8], ends: &mut Vec<usize>) {
    ends.clear();
    let mut r = Reader { bytes };
    let n = r.varint();
    ends.push(bytes.len() - r.bytes.len());
    for _ in 0..n {
        r.sized();
        ends.push(bytes.len() - r.bytes.len());
    }
    ends.push(bytes.len());
}

/// Appends `v` preceded by the length of its bytes, so that a reader can pass over it, or
/// take its bytes, without decoding it.
#[inline]
fn put_sized<T: Pack>(v: &T, out: &mut Vec<u8>) {
    let at = out.len();
    out.push(0);
    v.put(out);
    let len = out.len() - at - 1;
    if len < 0x80 {
        out[at] = len as u8;
    } else {
        // Rare: a longer part moves up to make room for its longer length.
        let mut prefix = Vec::with_capacity(3);
        put_varint(&mut prefix, len as u64);
        out.splice(at..=at, prefix);
    }
}
