package generic

import (
	"context"
	"errors"
	"fmt"

	"github.com/generic-informers/generic/internal/cachewait"
	"github.com/generic-informers/generic/internal/listwatch"
)

// Shard returns the factory's shard (see WithShard), and the one a reshard
// under way widens it to (nil if none).
func (r *Registry) Shard() (current Shard, next *Shard) {
	return r.shard.shard()
}

// BeginReshard is the first step of moving the factory's informers to
// shard next: they select the union of their current shard and next,
// list it (their handlers get adds for the objects that joined), and
// BeginReshard returns once every informer the factory started has that
// union in its cache, or with ctx's error. Informers given a shard of
// their own (WithShard on Acquire) are not moved.
//
// Resharding without a moment at which an object is in no replica's cache
// takes two steps across the replicas: start the new replicas (their
// factories WithShard(i, next.Count)) and wait for their caches to sync;
// call BeginReshard(next) on every old replica and wait for all to return;
// then call Reshard(next) on each, which narrows it to next. Reshard alone
// (without BeginReshard on all replicas first) does both steps in one
// replica, which is enough when nothing else relies on the union.
//
// An invalid shard, or a shard other than the one a reshard under way
// widens to, is an error and changes nothing.
//
// A factory with a membership (WithMembership) reshards by itself:
// BeginReshard and Reshard return ErrMembershipReshards.
func (r *Registry) BeginReshard(ctx context.Context, next Shard) error {
	if r.member != nil {
		return ErrMembershipReshards
	}
	generation, err := r.shard.widen(next)
	if err != nil {
		return err
	}
	return r.waitForSelection(ctx, generation)
}

// Reshard moves the factory's informers to shard next: after BeginReshard
// if it was not called, they select next alone and list it; their handlers
// get deletes, carrying each object's last state, for the objects that
// left.
//
// Each step moves the informers' watches to the new selection without a
// relist: the watch lists the selection, hands on what differs from what
// the informer delivered (adds, updates, deletes), and watches the new
// selection from the list's resourceVersion. client-go's reflector would
// wait before each relist by its backoff (0.8 s doubling to 30 s while
// relists come less than 2 minutes apart). A watch that cannot move so
// (its list fails, a WatchList stream still in its initial events) ends,
// and the informer relists as client-go does: the deletes are then
// cache.DeletedFinalStateUnknown tombstones, from client-go's Replace. Reshard returns once
// every informer the factory started holds exactly next in its cache, or
// with ctx's error. See BeginReshard for resharding across replicas.
//
// A factory with a membership returns ErrMembershipReshards.
func (r *Registry) Reshard(ctx context.Context, next Shard) error {
	if err := r.BeginReshard(ctx, next); err != nil {
		return err
	}
	generation, err := r.shard.narrow(next)
	if err != nil {
		return err
	}
	return r.waitForSelection(ctx, generation)
}

// waitForSelection waits until every running informer of the factory's
// shard has listed at least the given generation of its selection and its
// cache holds that list.
func (r *Registry) waitForSelection(ctx context.Context, generation uint64) error {
	for _, e := range r.informers.Started() {
		if e.Key.ownShard != "" {
			continue
		}
		if err := e.Runner.waitForListed(ctx, generation); err != nil {
			return fmt.Errorf("generic: reshard of %s: %w", e.Key.gvr, err)
		}
	}
	return nil
}

// waitForListed waits until informer i has listed selection generation (or
// a later one) and its cache holds that list, or until it is plain that it
// cannot list: it is NotServed or Forbidden, or the server answered its
// last list with an error. Such an informer holds nothing it could be
// waited for; its reflector lists again by itself, with client-go's
// backoff, under the selection current then. An informer that stops first
// is done. So the wait lasts at most as long as the server takes to answer
// one list (kube-apiserver's --request-timeout, 60 s by default) and the
// cache to apply it, or until ctx ends.
func (i *informer[T]) waitForListed(ctx context.Context, generation uint64) error {
	for {
		last, ok, next := i.chain.LastListed()
		if ok && last.Generation >= generation {
			return i.waitForCacheToHold(ctx, last)
		}
		state, changed := i.machine.state()
		if state == NotServed || state == Forbidden || state == Stopped || i.chain.ListFailing() {
			return nil
		}
		select {
		case <-next:
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitForCacheToHold waits until the informer's cache has applied the list
// last (its reflector's Replace), or the informer stops.
func (i *informer[T]) waitForCacheToHold(ctx context.Context, last listwatch.Listing) error {
	if !cachewait.Tracked() {
		return ErrResourceVersionNotTracked
	}
	var selector cachewait.Selector
	if last.Selector != nil {
		selector = last.Selector
	}
	err := cachewait.Poll(ctx, i.machine.stoppedChan(), func() (bool, error) {
		return cachewait.HoldsList(i.shared.GetIndexer(), last.ResourceVersion, last.Keys, selector)
	})
	if errors.Is(err, cachewait.ErrStopped) {
		return nil
	}
	return err
}
