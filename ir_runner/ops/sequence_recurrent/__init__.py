"""Recurrent cells and sequences (LSTM, GRU, RNN) and sequence decoders (CTC, GatherTree)."""
