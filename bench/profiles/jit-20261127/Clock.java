public class Clock {
    public static void main(String[] a) {
        for (int round = 0; round < 5; round++) {
            long n = 200_000, t0 = System.nanoTime(), x = 0;
            for (long i = 0; i < n; i++) x += System.nanoTime();
            long t1 = System.nanoTime();
            System.out.printf("nanoTime: %.1f ns per call (%d)%n", (t1 - t0) / (double) n, x & 1);
        }
    }
}
