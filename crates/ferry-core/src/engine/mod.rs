//! The engine: matching, eager and rendezvous protocols, requests and progress.
